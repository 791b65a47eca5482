/**
 * How runtime failures read in pod status messages, as upstream shows them: the runtime's own
 * gRPC status message where upstream takes `status.Message()` (container create/start), and
 * grpc-go's error text (`rpc error: code = … desc = …`) where upstream prints the error itself
 * (image pulls, sandbox creation). Our `RuntimeError` prefix never reaches a status.
 *
 * @module
 */

import { grpcCodeName, RuntimeError } from "../../runtime/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

/** The runtime's message (upstream `grpcstatus.FromError(err).Message()`). */
export function runtimeStatusMessage(error: unknown): string {
  if (error instanceof RuntimeError) return error.grpcMessage;
  return errorMessage(error);
}

/** grpc-go's `Error()` of a status error (upstream `%v` of a CRI error). */
export function runtimeErrorText(error: unknown): string {
  if (error instanceof RuntimeError) {
    return `rpc error: code = ${
      grpcCodeName(error.code)
    } desc = ${error.grpcMessage}`;
  }
  return errorMessage(error);
}
