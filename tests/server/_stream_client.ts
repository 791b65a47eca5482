/**
 * A minimal client of the kubelet's streaming endpoints for tests: an HTTP Upgrade over TLS
 * with a client certificate, then WebSocket frames of the `channel.k8s.io` protocols (each
 * binary message starts with its channel byte: 0 stdin, 1 stdout, 2 stderr, 3 error status,
 * 255 close, in v5). Port-forward uses the same framing, two channels per port.
 */

/** One upgraded connection. */
export interface StreamSession {
  /** Status code of the answer (101 when upgraded). */
  status: number;
  /** Response head, lower-cased header names. */
  headers: Map<string, string>;
  /** The body of a non-101 answer (read until the server closed). */
  body: string;
  /** Bytes received per channel so far. */
  received(channel: number): Uint8Array;
  /** Text received on a channel so far. */
  text(channel: number): string;
  /**
   * Every data message's payload as sent, text and binary, in order (protocols without
   * channel bytes, such as `binary.k8s.io` and `base64.binary.k8s.io` log streams).
   */
  messages(): Uint8Array[];
  /** Sends one binary message on a channel. */
  send(channel: number, data: Uint8Array | string): Promise<void>;
  /** Resolves once the server closed the connection. */
  closed: Promise<void>;
  close(): void;
}

/** Where and how to connect. */
export interface StreamTarget {
  port: number;
  caPem: string;
  cert: { certPem: string; keyPem: string };
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function clientFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const frame = new Uint8Array(2 + extra + 4 + length);
  frame[0] = 0x80 | opcode;
  const view = new DataView(frame.buffer);
  if (extra === 0) frame[1] = 0x80 | length;
  else if (extra === 2) {
    frame[1] = 0x80 | 126;
    view.setUint16(2, length);
  } else {
    frame[1] = 0x80 | 127;
    view.setBigUint64(2, BigInt(length));
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  frame.set(mask, 2 + extra);
  for (let i = 0; i < length; i++) {
    frame[2 + extra + 4 + i] = payload[i]! ^ mask[i % 4]!;
  }
  return frame;
}

/** Splits whole server frames off `buffer`; returns them and the rest. */
function serverFrames(
  buffer: Uint8Array,
): {
  frames: Array<{ opcode: number; payload: Uint8Array }>;
  rest: Uint8Array;
} {
  const frames: Array<{ opcode: number; payload: Uint8Array }> = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const opcode = buffer[offset]! & 0x0f;
    let length = buffer[offset + 1]! & 0x7f;
    let header = 2;
    const view = new DataView(buffer.buffer, buffer.byteOffset + offset);
    if (length === 126) {
      if (buffer.length - offset < 4) break;
      length = view.getUint16(2);
      header = 4;
    } else if (length === 127) {
      if (buffer.length - offset < 10) break;
      length = Number(view.getBigUint64(2));
      header = 10;
    }
    if (buffer.length - offset < header + length) break;
    frames.push({
      opcode,
      payload: buffer.slice(offset + header, offset + header + length),
    });
    offset += header + length;
  }
  return { frames, rest: buffer.slice(offset) };
}

/**
 * Sends `method path` as an upgrade request with `headers` and reads the answer; after a 101
 * the connection carries WebSocket frames (or whatever the protocol is, for raw checks).
 */
export async function openStream(
  target: StreamTarget,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<StreamSession> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: target.port,
    caCerts: [target.caPem],
    cert: target.cert.certPem,
    key: target.cert.keyPem,
  });
  const head = [
    `${method} ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${target.port}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ].join("\r\n");
  await conn.write(ENCODER.encode(`${head}\r\n\r\n`));
  let buffer: Uint8Array = new Uint8Array();
  const chunk = new Uint8Array(65536);
  let end = -1;
  while (end === -1) {
    const n = await conn.read(chunk);
    if (n === null) break;
    buffer = concat(buffer, chunk.subarray(0, n));
    end = DECODER.decode(buffer).indexOf("\r\n\r\n");
  }
  const text = DECODER.decode(buffer);
  const headEnd = text.indexOf("\r\n\r\n");
  const [statusLine = "", ...lines] = text.slice(0, headEnd).split("\r\n");
  const status = Number(statusLine.split(" ")[1] ?? 0);
  const headerMap = new Map(
    lines.map((l) => {
      const i = l.indexOf(":");
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()] as const;
    }),
  );
  buffer = buffer.slice(ENCODER.encode(text.slice(0, headEnd + 4)).length);
  const channels = new Map<number, Uint8Array>();
  const messages: Uint8Array[] = [];
  let body = "";
  let closedConn = false;
  const close = () => {
    if (closedConn) return;
    closedConn = true;
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  const upgraded = status === 101;
  const closed = (async () => {
    if (!upgraded) {
      body = DECODER.decode(buffer);
      for (;;) {
        const n = await conn.read(chunk).catch(() => null);
        if (n === null) break;
        body += DECODER.decode(chunk.subarray(0, n));
      }
      return;
    }
    for (;;) {
      const { frames, rest } = serverFrames(buffer);
      buffer = rest;
      for (const frame of frames) {
        if (frame.opcode === 8) return;
        if (frame.opcode === 9) {
          await conn.write(clientFrame(10, frame.payload)).catch(() => {});
        }
        if (frame.opcode === 1 || frame.opcode === 2) {
          messages.push(frame.payload);
        }
        if (frame.opcode !== 2 || frame.payload.length === 0) continue;
        const channel = frame.payload[0]!;
        channels.set(
          channel,
          concat(
            channels.get(channel) ?? new Uint8Array(),
            frame.payload.slice(1),
          ),
        );
      }
      const n = await conn.read(chunk).catch(() => null);
      if (n === null) return;
      buffer = concat(buffer, chunk.subarray(0, n));
    }
  })().finally(close);
  if (!upgraded) await closed;
  return {
    status,
    headers: headerMap,
    get body() {
      return body;
    },
    received: (channel) => channels.get(channel) ?? new Uint8Array(),
    messages: () => [...messages],
    text: (channel) =>
      DECODER.decode(channels.get(channel) ?? new Uint8Array()),
    async send(channel, data) {
      const bytes = typeof data === "string" ? ENCODER.encode(data) : data;
      await conn.write(
        clientFrame(2, concat(new Uint8Array([channel]), bytes)),
      );
    },
    closed,
    close,
  };
}

/** The headers of a WebSocket upgrade offering `protocols`. */
export function websocketHeaders(protocols: string[]): Record<string, string> {
  const key = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))),
  );
  return {
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Key": key,
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Protocol": protocols.join(", "),
  };
}

/**
 * The containers of the streaming tests' pod: busybox httpd serving "served-by-httpd" on 8080
 * and a talker printing "tick N" every 0.2 s.
 */
export function streamingContainers(image: string): unknown[] {
  return [{
    name: "httpd",
    image,
    imagePullPolicy: "IfNotPresent",
    command: [
      "sh",
      "-c",
      "mkdir -p /www && echo served-by-httpd > /www/index.html && exec httpd -f -p 8080 -h /www",
    ],
  }, {
    name: "talker",
    image,
    imagePullPolicy: "IfNotPresent",
    command: [
      "sh",
      "-c",
      "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done",
    ],
  }];
}
