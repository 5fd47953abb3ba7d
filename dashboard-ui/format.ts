import { h } from './dom';
import type { Bounded, JobState } from './api';

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = s / 60;
  if (m < 60) return `${Math.floor(m)} min ${Math.round(s % 60)} s`;
  const hours = m / 60;
  if (hours < 48) return `${Math.floor(hours)} h ${Math.round(m % 60)} min`;
  return `${Math.floor(hours / 24)} d`;
}

export function when(iso: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** Time of day to the millisecond, for log lines a few ms apart (the date is in the title). */
export function clock(iso: string): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return iso;
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });
}

export function count(n: number, cap?: number): string {
  return cap !== undefined && n >= cap ? `${cap.toLocaleString()}+` : n.toLocaleString();
}

/** "1 job", "3 jobs", "1,204 schedules". */
export function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;
}

export function badge(state: JobState): HTMLElement {
  return h('span', { class: `badge st-${state}` }, state);
}

/** Code points in a (shown, so bounded) text: an emoji is one character, not two UTF-16 units. */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** A bounded text: the text, and a visible note when the server cut it. */
export function boundedBlock(b: Bounded, cls = 'code'): HTMLElement {
  return h(
    'div',
    {},
    h('pre', { class: cls }, b.text),
    // Both counts in characters (code points), as the server counts `length`; the marker is 13.
    b.truncated ? h('p', { class: 'note' }, `Truncated: ${b.length.toLocaleString()} characters in total, the first ${(codePoints(b.text) - 13).toLocaleString()} shown.`) : null,
  );
}

export function progressBar(progress: number, stage: string | null): HTMLElement {
  const bar = h('div', { class: 'bar-fill' });
  bar.style.width = `${Math.max(0, Math.min(100, progress))}%`;
  return h('div', { class: 'progress' }, h('div', { class: 'bar' }, bar), h('span', { class: 'bar-label' }, `${progress}%${stage ? ` · ${stage}` : ''}`));
}
