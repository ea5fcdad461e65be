import { definePlugin, defineScrubber, Pseudonymizer, type ScrubRuleInfo, type ScrubSite } from '../../../kernel/public.js';
import { replaceShapes, SHAPE_RULE_NAMES } from './detectors.js';

/** Key spelling aside (`First-Name`, `firstName`, `first_name`): lower-case letters and digits only. */
const normalized = new Map<string, string>();
function norm(key: string): string {
  let n = normalized.get(key);
  if (n === undefined) {
    n = key.replace(/[^a-z0-9]/g, '');
    if (normalized.size < 10_000) normalized.set(key, n);
  }
  return n;
}

const PERSON_NAME_KEYS = new Set(['firstname', 'lastname', 'fullname', 'givenname', 'familyname', 'surname', 'middlename', 'maidenname', 'cardholdername', 'holdername', 'accountholdername', 'customername', 'contactname', 'billingname', 'shippingname', 'recipientname', 'legalname']);
const ADDRESS_KEYS = new Set(['address', 'addressline1', 'addressline2', 'line1', 'line2', 'street', 'streetaddress', 'street1', 'street2', 'postalcode', 'postcode', 'zip', 'zipcode', 'billingaddress', 'shippingaddress', 'homeaddress', 'mailingaddress']);
const BIRTH_KEYS = new Set(['dob', 'dateofbirth', 'birthdate', 'birthday']);
const NATIONAL_ID_KEYS = new Set(['ssn', 'socialsecuritynumber', 'nationalid', 'nationalidnumber', 'taxid', 'tin', 'nin', 'nino', 'passport', 'passportnumber', 'driverslicense', 'driverlicense', 'idnumber', 'personalnumber']);
const PHONE_KEYS = new Set(['phone', 'phonenumber', 'mobile', 'mobilephone', 'cell', 'cellphone', 'telephone', 'tel', 'fax']);
/** Sibling keys (or an `object` type) that say an object describes a person, so its `name` is a person's name. */
const PERSON_HINTS = /^(email|emailaddress|phone|phonenumber|firstname|lastname|address|dob|birthdate|dateofbirth|ssn|username|login)$/;
const PERSON_OBJECTS = /^(customer|person|user|contact|account|member|employee|patient|cardholder|recipient|sender|owner|author|profile|individual)$/;
const PERSON_NAME = /^\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’.-]*){1,3}$/u;

const RULES: ScrubRuleInfo[] = [
  { name: 'email', category: 'pii', description: 'E-mail addresses anywhere.' },
  { name: 'phone', category: 'pii', description: 'Phone numbers anywhere (international, North-American style), and any value of a phone-like key.' },
  { name: 'card_number', category: 'pii', description: 'Payment card numbers (12-19 digits starting 2-6, passing Luhn); the pseudonym keeps the network digits and passes Luhn.' },
  { name: 'iban', category: 'pii', description: 'IBANs passing the mod-97 check; the pseudonym keeps the country and passes the check.' },
  { name: 'national_id', category: 'pii', description: 'US social security numbers anywhere, and values of keys such as ssn, tax_id, passport_number.' },
  { name: 'ip_address', category: 'pii', description: 'IPv4 and IPv6 addresses anywhere.' },
  { name: 'person_name', category: 'pii', description: 'Values of name keys (first_name, last_name, cardholder_name …), and of `name` in an object that describes a person.' },
  { name: 'postal_address', category: 'pii', description: 'Street-level address keys (address, line1, line2, street, postal_code, zip); city, state and country stay.' },
  { name: 'birth_date', category: 'pii', description: 'Values of dob, date_of_birth, birth_date, birthday (digits replaced, format kept).' },
];
for (const name of SHAPE_RULE_NAMES) if (!RULES.some((r) => r.name === name)) throw new Error(`scrubber/pii: rule ${name} is not described`);

function describesPerson(site: ScrubSite): boolean {
  const parent = site.parent;
  if (!parent) return false;
  if (typeof parent.object === 'string' && PERSON_OBJECTS.test(norm(parent.object.toLowerCase()))) return true;
  return Object.keys(parent).some((k) => PERSON_HINTS.test(norm(k.toLowerCase())));
}

/** The rule a key alone decides for its value, if any. */
function keyRule(site: ScrubSite, value: string): string | null {
  if (site.key === null) return null;
  const key = norm(site.key);
  if (PERSON_NAME_KEYS.has(key) || (key === 'name' && PERSON_NAME.test(value.trim()) && describesPerson(site))) return 'person_name';
  if (ADDRESS_KEYS.has(key)) return 'postal_address';
  if (BIRTH_KEYS.has(key)) return 'birth_date';
  if (NATIONAL_ID_KEYS.has(key)) return 'national_id';
  if (PHONE_KEYS.has(key) && /\d/.test(value)) return 'phone';
  return null;
}

/**
 * PII: e-mail addresses, phone numbers, card numbers (Luhn), US SSNs, IBANs and IP addresses
 * wherever they appear, and names, street addresses, birth dates and national ids in fields
 * whose keys say so. Replacements are the tenant's keyed, format-preserving pseudonyms.
 */
export default definePlugin({
  name: 'scrubber/pii',
  kind: 'scrubber',
  version: '1.0.0',
  pure: true,
  setup: () =>
    defineScrubber({
      rules: RULES,
      visitor(ctx) {
        const p = Pseudonymizer.for(ctx.tenantKey);
        const disabled = new Set(ctx.rules.disable);
        return (value, site, found) => {
          const rule = keyRule(site, value);
          if (rule && !disabled.has(rule) && value.trim()) {
            found(rule);
            return rule === 'birth_date' || rule === 'phone' ? p.digits(value) : p.text(value);
          }
          return replaceShapes(value, p, disabled, found);
        };
      },
    }),
});
