/**
 * Injected time. Everything in `src/pod`, `src/status` and `src/server`
 * reads time through a {@linkcode Clock}; nothing there calls `Date.now` or
 * `setTimeout` directly.
 * @module
 */
export type { Clock } from "./clock.ts";
export { systemClock } from "./clock.ts";
