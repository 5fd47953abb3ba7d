/** Injection token of the resolved SampleConfig, so providers read the same values as the queue. */
export const SAMPLE_CONFIG = Symbol('SAMPLE_CONFIG');
