import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../kernel/errors.js';

/** Resolves a host name to every address it has (tests hand in a fixed table). @public */
export type Resolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

/** The system resolver (getaddrinfo, so /etc/hosts counts), every address in its own order. @public */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** A target the guard accepted: the parsed URL and the one address the connection must use. @public */
export interface CheckedTarget {
  url: URL;
  /** Host name without brackets or trailing dots, as checked. */
  hostname: string;
  port: number;
  address: string;
  family: 4 | 6;
}

/** WHATWG Fetch "bad ports" (https://fetch.spec.whatwg.org/#port-blocking), and port 0. */
const BAD_PORTS = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Cloud instance-metadata names: refused before any lookup, whatever SERVICE_ALLOW_LOCAL_REPLAY says. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.internal', 'metadata.platformequinix.com']);

/**
 * Cloud instance-metadata addresses. Most already fall in ranges refused anyway (link-local,
 * CGNAT, reserved); they are listed so that relaxing the private checks never lets one through.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.169.253', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254', 'fd00:ec2::23']);

/** Ranges SERVICE_ALLOW_LOCAL_REPLAY=1 lets through: loopback and private (RFC 1918, IPv6 unique-local). */
const LOCAL_RANGES = new Set(['loopback', 'private', 'uniqueLocal']);

const blocked = (detail: string) => new AppError('replay_target_blocked', `target_url refused: ${detail}`);

/**
 * Why an address may not be a replay target, or null when it may. Only public unicast addresses
 * pass (plus loopback and private ones when `allowLocal`). IPv6 forms that carry an IPv4 address
 * (IPv4-mapped, SIIT, NAT64 well-known prefix, 6to4) are judged by that IPv4 address; other
 * transition forms (Teredo, IPv4-compatible, NAT64 local-use) are refused.
 * @public
 */
export function addressRefusal(address: string, allowLocal: boolean): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = ipaddr.parse(address);
  const text = ip.toString();
  if (METADATA_ADDRESSES.has(text)) return `${text} is a cloud instance-metadata address`;
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    if (embedded === 'refuse') return `${text} is an IPv6 transition address (${v6.range()})`;
    if (embedded) {
      const inner = addressRefusal(embedded, allowLocal);
      return inner && `${text} carries ${embedded}: ${inner}`;
    }
  }
  const range = ip.range();
  if (range === 'unicast') return null;
  if (allowLocal && LOCAL_RANGES.has(range)) return null;
  return `${text} is a ${RANGE_NAMES[range] ?? `${range}`} address`;
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (RFC 6598)',
  private: 'private (RFC 1918)',
  uniqueLocal: 'unique-local (private IPv6)',
  reserved: 'reserved',
};

/** The IPv4 address an IPv6 address stands for, 'refuse' for forms never allowed, or null. */
function embeddedIPv4(ip: ipaddr.IPv6): string | 'refuse' | null {
  const p = ip.parts;
  const last32 = () => `${p[6]! >> 8}.${p[6]! & 0xff}.${p[7]! >> 8}.${p[7]! & 0xff}`;
  switch (ip.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return last32();
    case 'rfc6052': // 64:ff9b::a.b.c.d is the well-known NAT64 prefix; 64:ff9b:1::/48 is local-use
      return p[2] === 0 ? last32() : 'refuse';
    case '6to4': // 2002:AABB:CCDD::/48 routes to AA.BB.CC.DD
      return `${p[1]! >> 8}.${p[1]! & 0xff}.${p[2]! >> 8}.${p[2]! & 0xff}`;
    case 'teredo':
      return 'refuse';
    default:
      // ::a.b.c.d (IPv4-compatible, deprecated): ipaddr.js calls it unicast.
      return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7]! > 1) ? 'refuse' : null;
  }
}

/** The URL, or 422 before anything else happens: absolute, http or https, no credentials. */
function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('validation_error', 'body.target_url: must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('validation_error', `body.target_url: scheme ${url.protocol.slice(0, -1)} is not allowed; use http:// or https://`);
  }
  return url;
}

/**
 * The replay guard. In order, before any socket opens: the URL (422), credentials in it, the
 * port, the host name or IP literal, then every address the name resolves to (400
 * `replay_target_blocked`, or `replay_dns_failed` when it does not resolve). It returns the one
 * address the caller must connect to, so a second DNS answer cannot swap it.
 * @public
 */
export async function checkReplayTarget(raw: string, opts: { allowLocal: boolean; resolve: Resolver; timeoutMs?: number }): Promise<CheckedTarget> {
  const url = parseTarget(raw);
  // Credentials in a URL are a classic way to disguise the host, and would land in records.
  if (url.username || url.password) throw blocked('URLs with user information (user:password@) are not allowed');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (BAD_PORTS.has(port)) throw blocked(`port ${port} is on the WHATWG bad-ports list`);

  // The URL parser has already normalised every IPv4 spelling (decimal, octal, hex, short forms,
  // percent-encoded, full-width digits) to dotted form, and IPv6 to its compressed form.
  const hostname = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
  if (!hostname) throw blocked('the host is empty');
  if (ipaddr.isValid(hostname)) {
    const refusal = addressRefusal(hostname, opts.allowLocal);
    if (refusal) throw blocked(refusal);
    return { url, hostname, port, address: ipaddr.parse(hostname).toString(), family: hostname.includes(':') ? 6 : 4 };
  }
  if (METADATA_NAMES.has(hostname)) throw blocked(`${hostname} is a cloud instance-metadata host`);
  if (!opts.allowLocal && (hostname === 'localhost' || hostname.endsWith('.localhost'))) throw blocked(`${hostname} is a loopback name`);

  let addresses: { address: string; family: 4 | 6 }[];
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), opts.timeoutMs ?? 10_000);
    });
    addresses = await Promise.race([opts.resolve(hostname), deadline]);
  } catch (err) {
    throw new AppError('replay_dns_failed', `target_url: ${hostname} did not resolve (${(err as { code?: string }).code ?? 'lookup failed'})`);
  } finally {
    clearTimeout(timer);
  }
  if (!addresses.length) throw new AppError('replay_dns_failed', `target_url: ${hostname} has no addresses`);
  // Every answer must pass: a name with one public and one private address is refused.
  for (const a of addresses) {
    const refusal = addressRefusal(a.address, opts.allowLocal);
    if (refusal) throw blocked(`${hostname} resolves to ${refusal}`);
  }
  const pinned = addresses[0]!;
  return { url, hostname, port, address: pinned.address, family: pinned.family };
}
