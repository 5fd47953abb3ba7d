/** A dependency edge of `getGraph`: from an upstream to its dependent. */
export interface GraphEdge {
  from: number;
  to: number;
  /** The dependent runs even if `from` fails or is cancelled (`dependsOn: [{ job, allowFailure: true }]`); absent otherwise. */
  allowFailure?: true;
}
