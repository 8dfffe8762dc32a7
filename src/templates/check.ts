import Handlebars from 'handlebars';
import type { ParamSpec, TemplateContent } from '../domain/types.js';

const CONTENT_FIELDS = ['subject', 'to', 'cc', 'bcc', 'from_name', 'from_email', 'reply_to', 'html', 'text'] as const;

/**
 * Problems an operator must fix before a template is stored: a broken Handlebars field or a
 * parameter schema that could never validate. Each problem names the field it is about.
 */
export function templateProblems(
  content: TemplateContent,
  params: readonly ParamSpec[],
): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  for (const field of CONTENT_FIELDS) {
    try {
      Handlebars.parse(content[field]);
    } catch (err) {
      problems.push({ path: field, message: `is not a valid template: ${firstLine(err)}` });
    }
  }
  const seen = new Set<string>();
  params.forEach((p, i) => {
    const at = `params/${i}`;
    if (seen.has(p.name)) problems.push({ path: `${at}/name`, message: `"${p.name}" is declared twice` });
    seen.add(p.name);
    if (p.pattern !== undefined) {
      try {
        new RegExp(p.pattern, 'u');
      } catch (err) {
        problems.push({ path: `${at}/pattern`, message: `is not a valid regular expression: ${firstLine(err)}` });
      }
    }
    if (p.min_length !== undefined && p.max_length !== undefined && p.min_length > p.max_length) {
      problems.push({ path: at, message: 'min_length is greater than max_length' });
    }
    if (p.minimum !== undefined && p.maximum !== undefined && p.minimum > p.maximum) {
      problems.push({ path: at, message: 'minimum is greater than maximum' });
    }
    const numeric = p.type === 'integer' || p.type === 'number';
    if (!numeric && (p.minimum !== undefined || p.maximum !== undefined)) {
      problems.push({ path: at, message: `minimum/maximum apply to integer and number parameters, not ${p.type}` });
    }
    if (p.enum?.some((v) => (numeric ? typeof v !== 'number' : typeof v !== 'string'))) {
      problems.push({
        path: `${at}/enum`,
        message: `values must all be ${numeric ? 'numbers' : 'strings'} for a ${p.type} parameter`,
      });
    }
  });
  return problems;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}
