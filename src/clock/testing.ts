/** Test doubles for `src/clock`. Import only from tests. */
export { FakeClock } from "./fake_clock.ts";
