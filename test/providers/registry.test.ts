import fs from 'node:fs';
import path from 'node:path';
import type { TObject, TSchema } from '@sinclair/typebox';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ServicePatch } from '../../src/admin/routes/bodies.js';
import { EVENTS_SECRETS, ServiceResource } from '../../src/admin/routes/resources.js';
import { ProviderResourceFields } from '../../src/admin/routes/service-providers.js';
import { trackingHeaders } from '../../src/delivery/tracking-headers.js';
import { TRANSPORTS } from '../../src/delivery/transports/index.js';
import { webhookSources } from '../../src/events/sources/index.js';
import { EVENT_SOURCES } from '../../src/events/types.js';
import { DESCRIPTORS, HTTP_PROVIDER_NAMES, PROVIDER_NAMES, WEBHOOK_SOURCES } from '../../src/providers/index.js';
import { EventsInput, ServiceInput } from '../../src/resources/inputs.js';
import { PROVIDERS as UI_PROVIDERS } from '../../ui/src/api/service-types.js';
import { EVENT_FIELDS, PROVIDER_FIELDS, visibleFields } from '../../ui/src/components/service-form.js';

/**
 * Issue 26 §1: a new provider is four files — its descriptor (src/providers/<name>.ts) with one
 * line in the registry (src/providers/index.ts), its transport and its events source. This
 * walks the registry: each provider has those files, its descriptor agrees with itself, every
 * list and schema that names providers has it, and no other source file lists providers by name.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const exists = (file: string) => fs.existsSync(path.join(ROOT, file));
const enumOf = (schema: TSchema): unknown[] => (schema.anyOf as TSchema[]).map((s) => s.const);

/** Dotted paths of a schema's leaves (`dkim.private_key`), in order. */
function leaves(schema: TObject, prefix = ''): string[] {
  return Object.entries<TSchema>(schema.properties).flatMap(([name, s]) =>
    s.type === 'object' && s.properties !== undefined ? leaves(s as TObject, `${prefix}${name}.`) : [`${prefix}${name}`],
  );
}

describe('the provider registry', () => {
  it('names each provider once, lower-case, each with its descriptor file', () => {
    expect(new Set(PROVIDER_NAMES).size).toBe(PROVIDER_NAMES.length);
    for (const name of PROVIDER_NAMES) {
      expect(name).toMatch(/^[a-z][a-z0-9]*$/);
      expect(exists(`src/providers/${name}.ts`), `src/providers/${name}.ts`).toBe(true);
    }
  });

  it.each(PROVIDER_NAMES)('%s: its transport is src/delivery/transports/<name>.ts, found by name', (name) => {
    expect(exists(`src/delivery/transports/${name}.ts`)).toBe(true);
    expect(typeof TRANSPORTS[name]).toBe('function');
  });

  it('has a transport for every provider and none besides', () => {
    expect(Object.keys(TRANSPORTS).sort()).toEqual([...PROVIDER_NAMES].sort());
  });

  it.each(WEBHOOK_SOURCES)('%s: its events source is src/events/sources/<name>.ts, found by name', (name) => {
    expect(exists(`src/events/sources/${name}.ts`)).toBe(true);
    const sources = webhookSources({ claimToken: () => Promise.resolve(true) });
    expect(sources[name]?.source).toBe(name);
    expect(Object.keys(sources)).toEqual([...WEBHOOK_SOURCES]);
  });

  it.each(DESCRIPTORS.filter((p) => p.settings !== undefined).map((p) => [p.name, p] as const))(
    '%s: its settings block agrees with itself',
    (_, p) => {
      const block = p.settings;
      if (block === undefined) throw new Error('filtered');
      const fields = leaves(block.schema);
      // Every field has its form label, and nothing else does.
      expect(Object.keys(block.labels)).toEqual(fields);
      for (const name of [...block.secrets, ...block.destination]) expect(fields).toContain(name);
      for (const name of Object.keys(block.defaults)) expect(Object.keys(block.schema.properties)).toContain(name);
      // GET shows what PUT takes, under the same names.
      expect(Object.keys(block.view.properties)).toEqual(Object.keys(block.schema.properties));
      if (p.kind === 'http') {
        expect(block.destination, 'an API secret goes to its endpoint').toContain('endpoint');
        for (const secret of block.secrets)
          expect((block.view.properties[secret] as TSchema).description).toMatch(/"\*{8}" when set/);
      }
    },
  );

  it.each(DESCRIPTORS.filter((p) => p.events !== undefined).map((p) => [p.name, p] as const))(
    '%s: its events block agrees with itself',
    (_, p) => {
      const events = p.events;
      if (events === undefined) throw new Error('filtered');
      const names = Object.keys(events.fields);
      expect(Object.keys(events.view)).toEqual(names);
      expect(Object.keys(events.labels)).toEqual(names);
      for (const name of [...events.required, ...events.secrets]) expect(names).toContain(name);
    },
  );

  it('gives no two events sources a setting of the same name (EventsInput merges them)', () => {
    const names = DESCRIPTORS.flatMap((p) => Object.keys(p.events?.fields ?? {}));
    expect(new Set(names).size).toBe(names.length);
  });

  it('is where every list and schema naming providers comes from', () => {
    const service = ServiceInput.properties as Record<string, TSchema>;
    expect(enumOf(ServiceInput.properties.provider)).toEqual([...PROVIDER_NAMES]);
    expect(enumOf(EventsInput.properties.source)).toEqual([...WEBHOOK_SOURCES]);
    expect(EVENT_SOURCES.slice(0, WEBHOOK_SOURCES.length)).toEqual([...WEBHOOK_SOURCES]);
    expect([...UI_PROVIDERS]).toEqual([...PROVIDER_NAMES]);
    expect(Object.keys(PROVIDER_FIELDS)).toEqual([...PROVIDER_NAMES]);
    expect(Object.keys(EVENT_FIELDS)).toEqual([...WEBHOOK_SOURCES]);
    for (const p of DESCRIPTORS) {
      if (p.settings !== undefined) {
        expect(service[p.name], `ServiceInput.${p.name}`).toMatchObject({ properties: p.settings.schema.properties });
        expect(ServicePatch.properties, `the PATCH body's ${p.name}`).toHaveProperty(p.name);
        const shown = visibleFields(p.name as (typeof UI_PROVIDERS)[number], '').map((f) => f.path);
        for (const leaf of leaves(p.settings.schema)) expect(shown, 'the UI form').toContain(`${p.name}.${leaf}`);
      }
      if (p.kind === 'http') expect(ProviderResourceFields, `GET's ${p.name}`).toHaveProperty(p.name);
      for (const [name, schema] of Object.entries(p.events?.fields ?? {})) {
        expect(EventsInput.properties, `EventsInput.${name}`).toHaveProperty(
          name,
          expect.objectContaining({ type: schema.type }),
        );
        expect((ServiceResource.properties.events as TObject).properties, `GET's events.${name}`).toHaveProperty(name);
        expect(EVENT_FIELDS[p.name as (typeof WEBHOOK_SOURCES)[number]].map((f) => f.path)).toContain(`events.${name}`);
      }
      for (const secret of p.events?.secrets ?? []) expect(EVENTS_SECRETS).toContain(secret);
      const tracking = p.events?.trackingHeaders?.('msg_x') ?? {};
      expect(Object.keys(trackingHeaders({ events: { source: p.name } }, 'msg_x'))).toEqual(Object.keys(tracking));
    }
    expect(HTTP_PROVIDER_NAMES.every((n) => PROVIDER_NAMES.includes(n))).toBe(true);
  });
});

/** The names a new provider joins: the HTTP providers and the webhook sources. */
const LISTED = [...new Set([...HTTP_PROVIDER_NAMES, ...WEBHOOK_SOURCES])];

/** A file is a provider's own when it is its descriptor, its transport (or a `<name>-*.ts` helper) or its events source. */
const ownFile = (file: string, name: string) =>
  file === `src/providers/${name}.ts` ||
  file.startsWith(`src/delivery/transports/${name}.`) ||
  file.startsWith(`src/delivery/transports/${name}-`) ||
  file.startsWith(`src/events/sources/${name}.`) ||
  file.startsWith(`src/events/sources/${name}-`);

function sourceFiles(root: string, dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    // The UI's types generated from the OpenAPI document are regenerated, not edited.
    if (e.isDirectory()) return rel === 'ui/src/api/generated' ? [] : sourceFiles(root, rel);
    return /\.tsx?$/.test(e.name) ? [rel] : [];
  });
}

/**
 * Provider names in code, comments aside, in a file that is not one of the provider's own (nor
 * the registry): a string or template literal that is a name (`case 'mailgun':`, `['ses',
 * 'postmark']`) or names two or more ("(ses, postmark, …)"), and a name used as an identifier
 * (`{ ses: …, postmark: … }`, `input.mailgun`). `root` lets the check run on an older tree.
 */
function namedOutsideOwnFiles(root: string): string[] {
  const found: string[] = [];
  for (const file of [...sourceFiles(root, 'src'), ...sourceFiles(root, 'ui/src')]) {
    const full = path.join(root, file);
    const source = ts.createSourceFile(
      file,
      fs.readFileSync(full, 'utf8'),
      ts.ScriptTarget.Latest,
      true,
      file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    const visit = (node: ts.Node): void => {
      if (
        ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateHead(node) ||
        ts.isTemplateMiddle(node) ||
        ts.isTemplateTail(node)
      ) {
        const text = node.text;
        const named = LISTED.filter((n) => text === n || new RegExp(`(^|[^\\w-])${n}([^\\w-]|$)`).test(text));
        const foreign = named.filter((n) => !ownFile(file, n));
        if (foreign.length > 0 && (named.includes(text as (typeof LISTED)[number]) || named.length >= 2)) {
          found.push(
            `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${JSON.stringify(text.slice(0, 80))}`,
          );
        }
      }
      if (
        ts.isIdentifier(node) &&
        file !== 'src/providers/index.ts' &&
        LISTED.some((n) => n === node.text && !ownFile(file, n))
      ) {
        found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.text}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('no list of providers outside the registry', () => {
  it('src/ and ui/src/ name an HTTP provider or webhook source only in its own files', () => {
    expect(namedOutsideOwnFiles(process.env.REGISTRY_SCAN_ROOT ?? ROOT)).toEqual([]);
  });
});
