/**
 * Samples a database server's CPU time from /proc every 100 ms, in a process of its own so that
 * the sampling does not count as the bench process's CPU. Prints the total in microseconds when
 * it gets SIGTERM.
 *
 * - `postgres <db>`: the backends serving one database. A backend's title names its database
 *   ("postgres: user db host(port) state"); the last reading of each backend is kept, so one that
 *   exits mid-run keeps what it used up to ≤ 100 ms before.
 * - `mysql`: the MariaDB/MySQL server, one process for every database (the bench runs nothing
 *   else there while it measures).
 *
 * A process already there at the first reading counts from that reading; one that appears later
 * counts whole. The PostgreSQL backends used to count whole: the enqueuer's pooled connections,
 * open since the enqueue, brought its CPU into the processing phase's figure. The first reading
 * is taken before the parent is told `ready` (CpuMeter.start waits for it).
 */
import { readFileSync, readdirSync } from 'node:fs';

const [dialect, database] = process.argv.slice(2);
const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux
const last = new Map<string, number>();
/** Readings of the processes there at the first sample: their CPU before it is not the phase's. */
const before = new Map<string, number>();
let sampled = false;

/** utime + stime of a process, in µs: the 12th and 13th fields after the ") " closing its name. */
function cpuOf(pid: string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

function isMeasured(cmdline: string): boolean {
  if (dialect === 'mysql') return /(^|\/)(mariadbd|mysqld)(\0|$)/.test(cmdline);
  return cmdline.startsWith('postgres: ') && cmdline.includes(` ${database} `);
}

function sample(): void {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!isMeasured(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
      const us = cpuOf(pid);
      if (!sampled) before.set(pid, us);
      last.set(pid, us);
    } catch {
      // the process ended between readdir and read
    }
  }
}

const timer = setInterval(sample, 100);
sample();
sampled = true;
process.send?.('ready');
// Never outlive the bench (a run that throws before stopping its meter would leave us polling /proc).
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  clearInterval(timer);
  sample();
  let total = 0;
  for (const [pid, us] of last) total += us - (before.get(pid) ?? 0);
  process.stdout.write(String(Math.round(total)));
  process.exit(0);
});
