/**
 * gRPC probes (upstream `pkg/probe/grpc`): one `grpc.health.v1.Health/Check` call over h2c
 * (HTTP/2 with prior knowledge, no TLS, as upstream dials with insecure credentials).
 *
 * The two protobuf messages are tiny, so they are coded here by hand:
 * `HealthCheckRequest { string service = 1; }` and
 * `HealthCheckResponse { ServingStatus status = 1; }` with
 * `UNKNOWN = 0, SERVING = 1, NOT_SERVING = 2, SERVICE_UNKNOWN = 3`.
 *
 * @module
 */

/** Path of the standard health-checking method. */
export const HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";

const SERVING_STATUS = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];
const UNIMPLEMENTED = 12;

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** One gRPC frame (uncompressed) holding a `HealthCheckRequest`. */
export function encodeHealthCheckRequest(
  service: string,
): Uint8Array<ArrayBuffer> {
  const name = new TextEncoder().encode(service);
  const message = name.length ? [0x0a, ...varint(name.length), ...name] : [];
  const frame = new Uint8Array(5 + message.length);
  new DataView(frame.buffer).setUint32(1, message.length);
  frame.set(message, 5);
  return frame;
}

function readVarint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (let i = at; i < bytes.length && shift < 35; i++) {
    const b = bytes[i]!;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, i + 1];
  }
  throw new SyntaxError("Truncated varint in gRPC health response");
}

/**
 * The serving status in a response body holding one gRPC frame; throws SyntaxError when the
 * body is not one uncompressed frame.
 */
export function decodeHealthCheckResponse(body: Uint8Array): number {
  if (body.length < 5 || body[0] !== 0) {
    throw new SyntaxError("Invalid gRPC health response: no message frame");
  }
  const length = new DataView(body.buffer, body.byteOffset).getUint32(1);
  const message = body.subarray(5, 5 + length);
  if (message.length !== length) {
    throw new SyntaxError("Invalid gRPC health response: truncated frame");
  }
  let status = 0; // proto3 default
  for (let at = 0; at < message.length;) {
    const [tag, next] = readVarint(message, at);
    at = next;
    const wire = tag & 7;
    if (wire === 0) {
      const [value, after] = readVarint(message, at);
      if (tag >>> 3 === 1) status = value;
      at = after;
    } else if (wire === 2) {
      const [len, after] = readVarint(message, at);
      at = after + len;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new SyntaxError("Invalid gRPC health response: bad wire type");
  }
  return status;
}

/** Classifies a health-check answer as upstream does (anything but SERVING fails). */
export async function healthCheckOutcome(
  response: Response,
  target: string,
): Promise<{ result: "success" | "failure"; output: string }> {
  const code = response.headers.get("grpc-status");
  if (response.status !== 200) {
    await response.body?.cancel();
    return {
      result: "failure",
      output: `gRPC probe ${target}: HTTP status ${response.status}`,
    };
  }
  if (code !== null && code !== "0") {
    await response.body?.cancel();
    const message = decodeURIComponent(
      response.headers.get("grpc-message") ?? "",
    );
    return {
      result: "failure",
      output: Number(code) === UNIMPLEMENTED
        ? `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${message}`
        : `gRPC probe ${target}: rpc error: code = ${code} desc = ${message}`,
    };
  }
  const status = decodeHealthCheckResponse(
    new Uint8Array(await response.arrayBuffer()),
  );
  if (status === 1) return { result: "success", output: "" };
  return {
    result: "failure",
    output: `service unhealthy (responded with "${
      SERVING_STATUS[status] ?? String(status)
    }")`,
  };
}
