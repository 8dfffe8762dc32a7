import Handlebars from 'handlebars';
import type { KeyType, ParamSpec, Template, TemplateContent } from '../domain/types.js';
import { ApiError } from '../errors/api-error.js';

/** Spec, Limits: text parameter length in locked sends. */
export const LOCKED_MAX_CHARS = 500;

export type RecipientField = 'to' | 'cc' | 'bcc';
export type SenderField = 'from_email' | 'from_name' | 'reply_to';

/** What the lock needs to know about a template version; computed once and cached. */
export interface TemplateShape {
  /** Recipient fields built from parameters (any Handlebars expression in them). */
  dynamicRecipients: RecipientField[];
  /** Sender fields built from parameters. */
  dynamicSenders: SenderField[];
  /** Parameters the HTML body inserts unescaped (`{{{x}}}`, `{{& x}}`); `all` when it cannot tell. */
  rawParams: ReadonlySet<string> | 'all';
}

type Owner = ReadonlySet<string> | 'all';
const NONE: ReadonlySet<string> = new Set();

function union(a: Owner, b: Owner): Owner {
  if (a === 'all' || b === 'all') return 'all';
  if (a.size === 0) return b;
  if (b.size === 0) return a;
  return new Set([...a, ...b]);
}

/** Whether a field holds anything but literal text and comments. */
function isDynamic(source: string): boolean {
  return Handlebars.parse(source).body.some((s) => s.type !== 'ContentStatement' && s.type !== 'CommentStatement');
}

/**
 * The root parameters an expression reads, given the stack of context-changing blocks around
 * it (`#each x` / `#with x`: inside, every path reads from `x`).
 */
function reads(node: hbs.AST.Expression, ctx: readonly Owner[]): Owner {
  switch (node.type) {
    case 'PathExpression': {
      const p = node as hbs.AST.PathExpression;
      if (p.data) {
        if (p.parts[0] === 'root') return p.parts[1] === undefined ? 'all' : new Set([p.parts[1]]);
        return ctx.at(-1) ?? NONE;
      }
      const level = ctx.length - p.depth;
      if (level > 0) return ctx[level - 1] ?? 'all';
      const head = p.parts[0];
      return head === undefined ? 'all' : new Set([head]);
    }
    case 'SubExpression': {
      const s = node as hbs.AST.SubExpression;
      return callReads(s.params, s.hash, ctx);
    }
    default:
      return NONE;
  }
}

function callReads(params: readonly hbs.AST.Expression[], hash: hbs.AST.Hash | undefined, ctx: readonly Owner[]): Owner {
  let out: Owner = NONE;
  for (const e of params) out = union(out, reads(e, ctx));
  for (const pair of hash?.pairs ?? []) out = union(out, reads(pair.value, ctx));
  return out;
}

/** `{{x}}` reads x; `{{helper a b=c}}` reads a and c (the helper name is no parameter). */
function statementReads(
  path: hbs.AST.PathExpression | hbs.AST.Literal,
  params: readonly hbs.AST.Expression[],
  hash: hbs.AST.Hash | undefined,
  ctx: readonly Owner[],
): Owner {
  const call = params.length > 0 || (hash?.pairs.length ?? 0) > 0;
  return call ? callReads(params, hash, ctx) : reads(path, ctx);
}

const SAME_CONTEXT_BLOCKS = new Set(['if', 'unless']);

/** Parameters inserted unescaped anywhere in a program. */
function rawReads(program: hbs.AST.Program, ctx: readonly Owner[]): Owner {
  let out: Owner = NONE;
  for (const s of program.body) {
    if (s.type === 'MustacheStatement') {
      const m = s as hbs.AST.MustacheStatement;
      if (!m.escaped) out = union(out, statementReads(m.path, m.params, m.hash, ctx));
    } else if (s.type === 'BlockStatement') {
      const b = s as hbs.AST.BlockStatement;
      const name = b.path.original;
      const inner =
        SAME_CONTEXT_BLOCKS.has(name) && b.params.length > 0 ? ctx : [...ctx, statementReads(b.path, b.params, b.hash, ctx)];
      if (b.program !== undefined && b.program !== null) out = union(out, rawReads(b.program, inner));
      if (b.inverse !== undefined && b.inverse !== null) out = union(out, rawReads(b.inverse, ctx));
    }
    if (out === 'all') return out;
  }
  return out;
}

export function analyseTemplate(t: TemplateContent): TemplateShape {
  return {
    dynamicRecipients: (['to', 'cc', 'bcc'] as const).filter((f) => isDynamic(t[f])),
    dynamicSenders: (['from_email', 'from_name', 'reply_to'] as const).filter((f) => isDynamic(t[f])),
    rawParams: rawReads(Handlebars.parse(t.html), []),
  };
}

export function hasDynamicRecipient(shape: TemplateShape): boolean {
  return shape.dynamicRecipients.length > 0;
}

/** Whether this send is locked (Authentication rule 10): a public key and a dynamic recipient. */
export function isLockedSend(shape: TemplateShape, keyType: KeyType): boolean {
  return keyType === 'public' && hasDynamicRecipient(shape);
}

/**
 * Rule 10, the parts that depend only on the template and the key (checked right after the
 * template lookup, before the CAPTCHA):
 * - a dynamic recipient needs `allow_dynamic_recipients` on the template, for every key
 *   (403 `dynamic_recipient_not_allowed`);
 * - with a public key it also needs CAPTCHA on the template (403 `dynamic_recipient_requires_captcha`);
 * - with a public key the From address never comes from parameters, and with a dynamic
 *   recipient neither do the From name and Reply-To (403 `dynamic_field_not_allowed`, `details.fields`).
 */
export function checkTemplateLock(
  template: Pick<Template, 'allow_dynamic_recipients' | 'captcha'>,
  shape: TemplateShape,
  keyType: KeyType,
): void {
  const dynamic = hasDynamicRecipient(shape);
  if (dynamic && !template.allow_dynamic_recipients) {
    throw new ApiError('dynamic_recipient_not_allowed', {
      message: `The template builds ${shape.dynamicRecipients.join(', ')} from parameters but does not allow dynamic recipients.`,
      details: { fields: shape.dynamicRecipients },
    });
  }
  if (keyType !== 'public') return;
  if (dynamic && !template.captcha) {
    throw new ApiError('dynamic_recipient_requires_captcha', { details: { fields: shape.dynamicRecipients } });
  }
  const fields = shape.dynamicSenders.filter((f) => f === 'from_email' || dynamic);
  if (fields.length > 0) {
    const when = dynamic ? ' when the recipient is' : '';
    throw new ApiError('dynamic_field_not_allowed', {
      message: `With a public key, ${fields.join(', ')} may not be built from parameters${when}.`,
      details: { fields },
    });
  }
}

interface LockIssue {
  param: string;
  code: 'content_locked';
  message: string;
}

function longestText(value: unknown, depth = 0): number {
  if (typeof value === 'string') return [...value].length;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value).length;
  if (value === null || typeof value !== 'object' || depth > 20) return 0;
  let max = 0;
  for (const v of Object.values(value)) max = Math.max(max, longestText(v, depth + 1));
  return max;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * Rule 10, the content of a locked send: no HTML parameters (declared `html`, or inserted
 * unescaped by the HTML body) and no value over 500 characters; 422
 * `invalid_template_params` with `details.reason = content_locked` and one issue per parameter.
 */
export function checkLockedContent(params: Record<string, unknown>, specs: readonly ParamSpec[], shape: TemplateShape): void {
  const types = new Map(specs.map((s) => [s.name, s.type]));
  const issues: LockIssue[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (isEmpty(value)) continue;
    if (types.get(name) === 'html') {
      issues.push({
        param: name,
        code: 'content_locked',
        message: `${name} is an HTML parameter, refused for public-key sends to dynamic recipients`,
      });
    } else if (shape.rawParams === 'all' || shape.rawParams.has(name)) {
      issues.push({
        param: name,
        code: 'content_locked',
        message: `${name} is inserted as raw HTML, refused for public-key sends to dynamic recipients`,
      });
    } else if (longestText(value) > LOCKED_MAX_CHARS) {
      issues.push({
        param: name,
        code: 'content_locked',
        message: `${name} is longer than ${LOCKED_MAX_CHARS} characters, refused for public-key sends to dynamic recipients`,
      });
    }
  }
  if (issues.length > 0) {
    throw new ApiError('invalid_template_params', {
      message: 'Public-key sends to dynamic recipients accept no HTML and no value over 500 characters.',
      details: { reason: 'content_locked', issues },
    });
  }
}
