/**
 * Samples the CPU time of the PostgreSQL backends serving one database, from /proc, every 100 ms,
 * in a process of its own so that the sampling does not count as the bench process's CPU. A
 * backend's title names its database ("postgres: user db host(port) state"); the last reading of
 * each backend is kept, so one that exits mid-run keeps what it used up to ≤ 100 ms before.
 * Prints the total in microseconds when it gets SIGTERM.
 */
import { readFileSync, readdirSync } from 'node:fs';

const database = process.argv[2];
const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
const last = new Map<string, number>();

function sample(): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(` ${database} `)) continue;
      // Fields after the ") " that closes the command name: utime is the 12th, stime the 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      last.set(pid, (Number(fields[11]) + Number(fields[12])) * TICK_US);
    } catch {
      // the process ended between readdir and read
    }
  }
}

const timer = setInterval(sample, 100);
sample();
// Never outlive the bench (a run that throws before stopping its meter would leave us polling /proc).
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  clearInterval(timer);
  sample();
  let total = 0;
  for (const us of last.values()) total += us;
  process.stdout.write(String(Math.round(total)));
  process.exit(0);
});
