/** Prints passed / failed / skipped per dialect, read from the `[dialect]` prefix of each describe. */
class DialectSummaryReporter {
  onRunComplete(_contexts, results) {
    const rows = new Map();
    const bump = (key, status) => {
      const row = rows.get(key) || { passed: 0, failed: 0, skipped: 0 };
      if (status === 'passed') row.passed++;
      else if (status === 'failed') row.failed++;
      else row.skipped++;
      rows.set(key, row);
    };
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        const tag = test.ancestorTitles.map((t) => /^\[(postgres|mysql|sqlite)\]/.exec(t)).find(Boolean);
        bump(tag ? tag[1] : 'unit (no database)', test.status);
      }
    }
    const order = ['postgres', 'mysql', 'sqlite', 'unit (no database)'];
    const lines = ['', 'Tests per dialect:', '  dialect              passed  failed  skipped'];
    for (const key of order) {
      const r = rows.get(key) || { passed: 0, failed: 0, skipped: 0 };
      lines.push(`  ${key.padEnd(20)} ${String(r.passed).padStart(6)}  ${String(r.failed).padStart(6)}  ${String(r.skipped).padStart(7)}`);
    }
    process.stdout.write(lines.join('\n') + '\n\n');
  }
}
module.exports = DialectSummaryReporter;
