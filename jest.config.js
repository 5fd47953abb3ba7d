/**
 * ESM Jest (NestJS 12 is ESM-only); see TOOLCHAIN.md. `npm test` runs unit and integration
 * specs together; integration specs run once per dialect against real servers.
 */
module.exports = {
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // Specs that restart the shared database servers, and the cross-process timing and global
  // server counter specs of test/alone/, run alone, in phase 2 (test/run-tests.cjs).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/restart/', '<rootDir>/test/alone/'],
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.spec.json' }] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^nestjs-sql-job-queue$': '<rootDir>/lib/index.ts',
    '^nestjs-sql-job-queue/dashboard$': '<rootDir>/lib/dashboard/index.ts',
    '^nestjs-sql-job-queue/testing$': '<rootDir>/lib/testing/index.ts',
    '^nestjs-sql-job-queue/tracing$': '<rootDir>/lib/tracing/index.ts',
    '^nestjs-sql-job-queue/metrics$': '<rootDir>/lib/metrics/index.ts',
    '^nestjs-sql-job-queue/health$': '<rootDir>/lib/health/index.ts',
  },
  globalSetup: '<rootDir>/test/support/global-setup.cjs',
  reporters: ['default', '<rootDir>/test/support/dialect-summary.reporter.cjs'],
  testTimeout: 120_000,
  // Three on two cores: several specs wait on timers most of their time (recurring's cron slots,
  // chaos's kill cadence, worker processes booting), so a third file keeps the cores busy.
  // Phase 1 took 677 s instead of 759 s here, with every timing spec passing.
  maxWorkers: 3,
  // A worker's heap grew to 0.4-1.1 GB over the integration files (vm contexts of every file it
  // ran), and its exit at the end outlasted Jest's 500 ms ("failed to exit gracefully … force
  // exited" in every full run). Restarted past this size, no worker was force-exited; phase 1 took
  // 674 and 683 s against 728 and 794 s without it the same day (one run each, a noisy machine).
  workerIdleMemoryLimit: '800MB',
};
