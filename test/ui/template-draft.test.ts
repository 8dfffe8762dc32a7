import { describe, expect, it } from 'vitest';
import type { TemplateResource } from '../../ui/src/api/template-types.js';
import {
  changedFields,
  draftFromResource,
  draftToWrite,
  emptyDraft,
  formField,
  formIssues,
} from '../../ui/src/lib/template-draft.js';

const RESOURCE: TemplateResource = {
  id: 'welcome',
  name: 'Welcome',
  service_id: null,
  params: [{ name: 'name', type: 'string', required: true }],
  sample_params: { name: 'Ada', team: 'Analytical' },
  captcha: false,
  allow_dynamic_recipients: false,
  allow_attachments: true,
  strict_params: true,
  enforce_link_allowlist: false,
  frozen: false,
  content: {
    subject: 'Hi {{name}}',
    to: 'a@x.test',
    cc: '',
    bcc: '',
    from_name: 'Acme',
    from_email: '',
    reply_to: '',
    html: '<p>Hi</p>',
    text: '',
  },
  version: 3,
  created_at: '2026-11-25T00:00:00.000Z',
  updated_at: '2026-11-25T00:00:00.000Z',
};

describe('the template editor draft', () => {
  it('reads a template and writes back every field a PUT requires, content flat', () => {
    const draft = draftFromResource(RESOURCE);
    expect(draft.service_id).toBe('');
    expect(draft.params[0]?.name).toBe('name');
    const { write, issues } = draftToWrite(draft, { checkId: false });
    expect(issues).toEqual({});
    expect(write).toEqual({
      name: 'Welcome',
      service_id: null,
      params: RESOURCE.params,
      // `team` is not declared: carried through unchanged.
      sample_params: { name: 'Ada', team: 'Analytical' },
      ...RESOURCE.content,
      captcha: false,
      allow_dynamic_recipients: false,
      allow_attachments: true,
      strict_params: true,
      enforce_link_allowlist: false,
      frozen: false,
    });
  });

  it('names a new template by its id and checks the id', () => {
    const draft = { ...emptyDraft(), id: 'bad id', service_id: 'smtp' };
    const { write, issues } = draftToWrite(draft, { checkId: true });
    expect(write.name).toBe('bad id');
    expect(write.service_id).toBe('smtp');
    expect(issues.id).toBeDefined();
    expect(draftToWrite({ ...draft, id: 'ok.id-1' }, { checkId: true }).issues).toEqual({});
    // `new` is the create page's address (…/templates/new): such a template could never be opened.
    expect(draftToWrite({ ...draft, id: 'new' }, { checkId: true }).issues.id).toMatch(/"new" is reserved/);
  });

  it('finds the changed fields for a PATCH', () => {
    const base = draftToWrite(draftFromResource(RESOURCE), { checkId: false }).write;
    const next = draftToWrite({ ...draftFromResource(RESOURCE), subject: 'New', strict_params: false }, { checkId: false }).write;
    expect(changedFields(base, next)).toEqual({ subject: 'New', strict_params: false });
    expect(changedFields(base, base)).toEqual({});
  });

  it('holds the sample: stored, or generated when none is; an edit of it is a change to save', () => {
    const stored = draftFromResource(RESOURCE);
    expect(stored.samples).toEqual({ name: 'Ada' });
    const generated = draftFromResource({ ...RESOURCE, sample_params: null });
    // A person's name reads as one (sample-params.ts), not as the parameter printing its own name.
    expect(generated.samples).toEqual({ name: 'Ada' });
    const base = draftToWrite(generated, { checkId: false }).write;
    expect(base.sample_params).toEqual({ name: 'Ada' });
    const edited = draftToWrite({ ...generated, samples: { name: 'Grace' } }, { checkId: false }).write;
    expect(changedFields(base, edited)).toEqual({ sample_params: { name: 'Grace' } });
    // A parameter dropped from the schema takes its sample value with it.
    const dropped = draftToWrite({ ...stored, params: [] }, { checkId: false }).write;
    expect(dropped.sample_params).toEqual({ team: 'Analytical' });
    expect(emptyDraft().samples).toEqual({});
  });

  it('maps server field names onto the form', () => {
    expect(formField('sample_params')).toBe('sample_params');
    expect(formField('content.subject')).toBe('subject');
    expect(formField('template.html')).toBe('html');
    expect(formField('params.2.pattern')).toBe('params.2.pattern');
    expect(formField('params.1')).toBe('params.1.name');
    expect(formIssues({ 'content.to': 'bad', to: 'worse', service_id: 'none' })).toEqual({
      to: 'bad; worse',
      service_id: 'none',
    });
  });
});
