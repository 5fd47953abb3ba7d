/** What a scenario hands back: tables, the settings that produced them, and any failures. */
export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
  notes?: string[];
}

export interface ScenarioReport {
  name: string;
  /** What is measured and how, in a sentence or two. */
  description: string;
  settings: string[];
  tables: Table[];
  /** Runs whose correctness check failed (their figures are left out of the tables). */
  failures: string[];
  elapsedMs?: number;
}

export function renderText(table: Table): string {
  const widths = table.columns.map((c, i) => Math.max(c.length, ...table.rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const out = [table.title, line(table.columns), widths.map((w) => '-'.repeat(w)).join('  '), ...table.rows.map(line)];
  for (const note of table.notes ?? []) out.push(`  * ${note}`);
  return out.join('\n');
}

export function renderMarkdown(table: Table): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const out = [`**${table.title}**`, '', `| ${table.columns.map(esc).join(' | ')} |`];
  out.push(`| ${table.columns.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`);
  for (const row of table.rows) out.push(`| ${row.map(esc).join(' | ')} |`);
  if (table.notes?.length) out.push('', ...table.notes.map((n) => `- ${n}`));
  return out.join('\n');
}
