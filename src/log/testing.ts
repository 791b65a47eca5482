/** Test doubles for `src/log`. Import only from tests. */
export { CaptureLogger } from "./capture_logger.ts";
export type { CapturedRecord } from "./capture_logger.ts";
