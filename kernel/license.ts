import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { TIERS, type Licence, type Tier } from './domain/index.js';

/** Without a licence: tenant `default`, tier `free`. @public */
export const DEFAULT_LICENCE: Licence = { tenant: 'default', tier: 'free' };

const TENANT_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** A fresh Ed25519 key pair as PEM strings. @public */
export function generateLicenceKeyPair(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * Signs a licence: `base64url(JSON payload) + "." + base64url(Ed25519 signature of that text)`.
 * @public
 */
export function issueLicence(licence: Licence, privateKeyPem: string): string {
  checkLicenceFields(licence);
  const payload = Buffer.from(JSON.stringify(licence)).toString('base64url');
  const signature = sign(null, Buffer.from(payload), createPrivateKey(privateKeyPem)).toString('base64url');
  return `${payload}.${signature}`;
}

function checkLicenceFields(licence: Licence): void {
  if (!TENANT_RE.test(licence.tenant)) throw new Error(`licence tenant '${licence.tenant}' must match [A-Za-z0-9_-]{1,64}`);
  if (!TIERS.includes(licence.tier)) throw new Error(`licence tier '${licence.tier}' must be one of ${TIERS.join(', ')}`);
  if (licence.exp !== undefined && !Number.isInteger(licence.exp)) throw new Error('licence exp must be whole seconds since the epoch');
}

/**
 * Verifies a licence token against the public key and returns what it carries. Throws an Error
 * that says what is wrong and how to fix it.
 * @public
 */
export function verifyLicence(token: string, publicKeyPem: string, now: Date = new Date()): Licence {
  const parts = token.trim().split('.');
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw new Error('SERVICE_LICENSE_KEY is not a licence token (expected payload.signature); issue one with `understudy license issue`.');
  }
  let key: KeyObject;
  try {
    key = createPublicKey(publicKeyPem);
  } catch {
    throw new Error('SERVICE_LICENSE_PUBLIC_KEY is not a PEM public key; use the public.pem written by `understudy license keygen`.');
  }
  if (!verify(null, Buffer.from(parts[0]), key, Buffer.from(parts[1], 'base64url'))) {
    throw new Error('SERVICE_LICENSE_KEY does not verify with SERVICE_LICENSE_PUBLIC_KEY; check that both come from the same key pair.');
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    throw new Error('SERVICE_LICENSE_KEY payload is not JSON.');
  }
  const { tenant, tier, exp } = (body ?? {}) as Record<string, unknown>;
  const licence: Licence = { tenant: String(tenant), tier: String(tier) as Tier };
  if (exp !== undefined) licence.exp = Number(exp);
  checkLicenceFields(licence);
  if (licence.exp !== undefined && licence.exp * 1000 < now.getTime()) {
    throw new Error(`SERVICE_LICENSE_KEY expired at ${new Date(licence.exp * 1000).toISOString()}; issue a new one.`);
  }
  return licence;
}
