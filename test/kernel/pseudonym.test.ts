import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ibanValid, luhnValid, newPseudonymKey, Pseudonymizer } from '../../kernel/scrub/pseudonym.js';

const KEY = newPseudonymKey();
const a = new Pseudonymizer(KEY);
const again = new Pseudonymizer(KEY);
const b = new Pseudonymizer(newPseudonymKey());
const classes = (s: string) => s.replace(/[a-z]/g, 'a').replace(/[A-Z]/g, 'A').replace(/\d/g, '9');

describe('keyed pseudonyms', () => {
  it('are deterministic per key, differ across keys, and never equal their input', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 6, maxLength: 60 }).filter((s) => /[A-Za-z0-9]/.test(s)), (value) => {
        assert.equal(again.text(value), a.text(value));
        assert.notEqual(a.text(value), value);
        assert.equal(a.text(value).length, value.length);
      }),
    );
    assert.notEqual(a.text('customer-1234-abcd'), b.text('customer-1234-abcd'));
  });

  it('keep the character classes, hex stays hex, and a prefix stays when asked', () => {
    assert.equal(classes(a.text('Jane Doe-42')), classes('Jane Doe-42'));
    assert.match(a.text('9f86d081884c7d65'), /^[0-9a-f]{16}$/);
    assert.match(a.text('sk_live_abcdefghij0123', 8), /^sk_live_[a-z]{10}\d{4}$/);
  });

  it('make Luhn-valid cards with the network digits, valid IBANs, e-mails, IPs', () => {
    for (const card of ['4111 1111 1111 1111', '5555-5555-5555-4444', '378282246310005']) {
      const p = a.card(card);
      assert.equal(p.replace(/\d/g, '9'), card.replace(/\d/g, '9'));
      assert.equal(p.slice(0, 2), card.slice(0, 2));
      assert.ok(luhnValid(p.replace(/\D/g, '')), p);
      assert.notEqual(p, card);
    }
    for (const iban of ['DE89370400440532013000', 'GB82 WEST 1234 5698 7654 32']) {
      const p = a.iban(iban);
      assert.ok(ibanValid(p.replace(/ /g, '')), p);
      assert.equal(p.slice(0, 2), iban.slice(0, 2));
      assert.equal(classes(p), classes(iban));
    }
    assert.match(a.email('jane.doe@mail.example.com'), /^[a-z]{4}\.[a-z]{3}@[a-z]{4}\.[a-z]{7}\.com$/);
    assert.match(a.ipv4('203.0.113.9'), /^\d{1,3}(\.\d{1,3}){3}$/);
    assert.match(a.ipv6('2001:db8::8a2e:370:7334'), /^[0-9a-f]{4}:[0-9a-f]{3}::[0-9a-f]{4}:[0-9a-f]{3}:[0-9a-f]{4}$/);
    assert.equal(a.digits('+1 (415) 555-0100').replace(/\d/g, '9'), '+9 (999) 999-9999');
  });
});
