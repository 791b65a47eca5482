/**
 * Typed error for configuration values the permission planner cannot turn
 * into Deno grants.
 * @module
 */

/** A config field or flag holds a value that cannot be expressed as a grant. */
export class PermissionPlanError extends TypeError {
  /** The config field or flag, e.g. `containerRuntimeEndpoint`. */
  readonly field: string;

  constructor(field: string, message: string, options?: ErrorOptions) {
    super(`Invalid value for "${field}": ${message}`, options);
    this.name = "PermissionPlanError";
    this.field = field;
  }
}
