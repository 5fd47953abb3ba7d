/** A page: its element, and a refresh the router calls on load and every `intervalMs` while visible. */
export interface Page {
  title: string;
  el: HTMLElement;
  refresh(): Promise<void>;
  /** 0: refresh once, on load. */
  intervalMs: number;
  loaded: boolean;
  dispose?(): void;
}
