/**
 * Base class of every error this library throws on purpose. Catch it to tell
 * our errors from driver or handler errors; switch on `code` to tell them apart.
 */
export abstract class JobQueueError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
