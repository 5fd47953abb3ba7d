/** Connection defaults matching the services on the development machines and in CI. */
module.exports = {
  PG_URL: process.env.PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  MYSQL_URL: process.env.MYSQL_URL || 'mysql://root@127.0.0.1:3306/test',
  ALL_DIALECTS: ['postgres', 'mysql', 'sqlite'],
};
