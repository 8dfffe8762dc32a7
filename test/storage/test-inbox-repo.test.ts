import { expect, it } from 'vitest';
import type { NewInboxEntry } from '../../src/storage/test-inbox.js';
import { databaseOf } from '../support/db.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';
import { insertModeMessage } from '../support/test-mode.js';

/** The captured inbox's repository (issue 27 §1/§4) on both dialects. */
describeDialects('test inbox repository on %s', (dialect, skip) => {
  const t = freshStoreEach(dialect, skip, (s) => seedOrg(s.store));

  function entry(id: string, createdAt: number, to: readonly string[], subject: string, template: string): NewInboxEntry {
    return {
      message_id: id,
      org_id: 'acme',
      template_id: template,
      subject,
      from_addr: 'noreply@acme.test',
      recipients: to.map((address) => ({ kind: 'to', address })),
      blob_key: `acme/eml_${id}`,
      size: 100,
      sha256: 'f00d',
      created_at: createdAt,
      captured_at: createdAt + 5,
    };
  }

  /** A test message and its captured row. */
  async function captured(m: { createdAt: number; to?: string[]; subject?: string; template?: string }): Promise<string> {
    const to = m.to ?? ['ann@example.com'];
    const id = await insertModeMessage(t.store, undefined, { mode: 'test', ...m, to });
    expect(await t.store.testInbox.insert(entry(id, m.createdAt, to, m.subject ?? 'Hi', m.template ?? 'contact'))).toBe(true);
    return id;
  }

  it.skipIf(skip)('captures once; get returns the entry with its status, in its organization only', async () => {
    const id = await captured({ createdAt: 1000, to: ['Ann@Example.com'], subject: 'Welcome' });
    expect(await t.store.testInbox.has(id)).toBe(true);
    expect(await t.store.testInbox.has('msg_nope')).toBe(false);
    const again = await t.store.testInbox.get('acme', id);
    expect(again).toEqual({
      message_id: id,
      org_id: 'acme',
      template_id: 'contact',
      subject: 'Welcome',
      from_addr: 'noreply@acme.test',
      recipients: [{ kind: 'to', address: 'Ann@Example.com' }],
      blob_key: `acme/eml_${id}`,
      size: 100,
      sha256: 'f00d',
      created_at: 1000,
      captured_at: 1005,
      status: 'queued',
    });
    // A retried hand-off captures nothing new: the first row stays as it was.
    const dup = { ...entry(id, 1000, [], 'Other', 'contact'), size: 1, captured_at: 9999 };
    expect(await t.store.testInbox.insert(dup)).toBe(false);
    expect((await t.store.testInbox.get('acme', id))?.size).toBe(100);
    expect(await t.store.testInbox.get('other', id)).toBeUndefined();
  });

  it.skipIf(skip)('lists newest first with the to, template, q and time filters and a keyset cursor', async () => {
    const a = await captured({ createdAt: 1000, to: ['ann@example.com'], subject: 'Order 100% done' });
    const b = await captured({ createdAt: 2000, to: ['bob@example.com'], subject: 'Reset_password', template: 'reset' });
    const c = await captured({ createdAt: 3000, to: ['ann@example.com', 'cy@example.com'], subject: 'Welcome' });
    const ids = async (f: Parameters<typeof t.store.testInbox.list>[1], limit = 10) =>
      (await t.store.testInbox.list('acme', f, limit)).map((e) => e.message_id);
    expect(await ids({})).toEqual([c, b, a]);
    expect(await ids({}, 2)).toEqual([c, b]);
    expect(await ids({ before: { created_at: 2000, message_id: b } })).toEqual([a]);
    expect(await ids({ to: 'ann@example.com' })).toEqual([c, a]);
    expect(await ids({ template_id: 'reset' })).toEqual([b]);
    expect(await ids({ from: 2000 })).toEqual([c, b]);
    // q: case-insensitive, across subject, from and addresses; % and _ are themselves, not wildcards.
    expect(await ids({ q: 'WELCOME' })).toEqual([c]);
    expect(await ids({ q: 'cy@' })).toEqual([c]);
    expect(await ids({ q: 'noreply@acme' })).toEqual([c, b, a]);
    expect(await ids({ q: '100%' })).toEqual([a]);
    expect(await ids({ q: '%' })).toEqual([a]);
    expect(await ids({ q: 'reset_' })).toEqual([b]);
    expect(await ids({ q: '_' })).toEqual([b]);
    expect(await ids({ q: 'o_der' })).toEqual([]);
    expect(await ids({ q: '\\' })).toEqual([]);
    expect(await ids({ q: 'welcome', to: 'bob@example.com' })).toEqual([]);
    expect(await t.store.testInbox.list('other', {}, 10)).toEqual([]);
  });

  it.skipIf(skip)(
    'deleteSome empties an organization in slices, returning blob keys; purging a message takes its row',
    async () => {
      const ids = [await captured({ createdAt: 1000 }), await captured({ createdAt: 2000 }), await captured({ createdAt: 3000 })];
      expect(await t.store.testInbox.deleteSome('acme', 2)).toEqual(ids.slice(0, 2).map((id) => `acme/eml_${id}`));
      expect(await t.store.testInbox.deleteSome('acme', 2)).toEqual([`acme/eml_${ids[2]}`]);
      expect(await t.store.testInbox.deleteSome('acme', 2)).toEqual([]);
      // The messages stay: emptying the inbox is not deleting history.
      expect(await t.store.messages.get('acme', ids[0] ?? '')).toBeDefined();

      const d = await captured({ createdAt: 4000 });
      await databaseOf(t.store).updateTable('messages').set({ status: 'sent' }).execute();
      await t.store.transaction((tx) => tx.messages.purgeOlderThan(5000, 100, 'test'));
      expect(await t.store.testInbox.has(d)).toBe(false);
    },
  );
});
