/**
 * netutils `ParseIPSloppy` as a test: IPv4 with leading zeros allowed (read as decimal), or IPv6.
 *
 * @module
 */

const IPV4_REGEXP = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Whether `text` parses as an IP address the sloppy way. */
export function isSloppyIP(text: string): boolean {
  const v4 = IPV4_REGEXP.exec(text);
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255);
  if (!text.includes(":") || text.includes("%")) return false;
  try {
    return new URL(`http://[${text}]/`).hostname !== "";
  } catch {
    return false;
  }
}
