import { describe, expect, it } from 'vitest';
import type { Organization } from '../../ui/src/api/organization-types.js';
import {
  changedSettings,
  entries,
  formFromOrganization,
  formProblems,
  NEW_ORG_FORM,
  settingsFromForm,
} from '../../ui/src/components/org-form.js';

const ORG: Organization = {
  id: 'acme',
  name: 'Acme',
  plan: 'pro',
  credits: 40,
  overdraft: 5,
  when_out_of_credits: 'reject',
  hold_queue_limit: 100,
  email_verified: true,
  suspended: false,
  security: {
    require_private_key: true,
    allow_private_keys_in_browsers: false,
    allowed_origins: ['acme.test', '*.acme.test'],
    allow_mobile_apps: false,
    mobile_app_schemes: [],
    block_headless: true,
    ip_limit: { requests: 10, per_seconds: 60 },
    recipient_daily_limit: 5,
    link_domains: [],
    block_list: { list: ['x@y.test'], watch_variable: 'email' },
    public_overdraft: false,
  },
  captcha: { site_key: 'site', secret_key: '********' },
  held: 0,
  created_at: '',
  updated_at: '',
};

describe('organization form', () => {
  it('round-trips the settings, leaving the block list entries and the CAPTCHA secret out', () => {
    const f = formFromOrganization(ORG);
    expect(f.allowed_origins).toBe('acme.test\n*.acme.test');
    expect(f.captcha_secret_key).toBe('');
    expect(f.captcha_secret_stored).toBe(true);
    expect(formProblems(f, false)).toEqual({});
    const body = settingsFromForm(f, false);
    expect(body).toEqual({
      name: 'Acme',
      plan: 'pro',
      credits: 'metered',
      overdraft: 5,
      when_out_of_credits: 'reject',
      hold_queue_limit: 100,
      email_verified: true,
      suspended: false,
      security: { ...ORG.security, block_list: { watch_variable: 'email' } },
      captcha: { site_key: 'site' },
    });
  });

  it('creates with every setting and the starting credits; the name defaults to the id', () => {
    const f = { ...NEW_ORG_FORM, id: 'globex', credit_mode: 'metered', credits: '25', plan: 'free' };
    expect(formProblems(f, true)).toEqual({});
    const body = settingsFromForm(f, true);
    expect(body).toMatchObject({ name: 'globex', credits: 25, plan: 'free', when_out_of_credits: 'hold', captcha: null });
    expect(body.security.ip_limit).toEqual({ requests: 10, per_seconds: 60 });
  });

  it('a new organization is unlimited on the least limiting plan by default (issue 29), not asking for starting credits', () => {
    const f = { ...NEW_ORG_FORM, id: 'globex', credits: 'not a number' };
    expect(formProblems(f, true)).toEqual({});
    expect(settingsFromForm(f, true)).toMatchObject({ credits: 'unlimited', plan: 'business_200k' });
  });

  it('reads an unlimited organization and sends a change of mode as the word', () => {
    const loaded = formFromOrganization({ ...ORG, credits: 'unlimited' });
    expect(loaded.credit_mode).toBe('unlimited');
    const base = settingsFromForm(loaded, false);
    expect(base.credits).toBe('unlimited');
    expect(changedSettings(base, settingsFromForm({ ...loaded, credit_mode: 'metered' }, false))).toEqual({ credits: 'metered' });
    expect(formFromOrganization(ORG).credit_mode).toBe('metered');
  });

  it("names bad input with the API's field names", () => {
    const f = { ...NEW_ORG_FORM, id: '-bad', credit_mode: 'metered', credits: '1.5', ip_requests: '0', captcha: true };
    expect(formProblems(f, true)).toEqual({
      id: expect.any(String),
      credits: expect.any(String),
      'security.ip_limit.requests': expect.any(String),
      'captcha.site_key': 'is required with CAPTCHA on',
      'captcha.secret_key': 'is required with CAPTCHA on',
    });
  });

  it('refuses the id "new" when creating: #/orgs/new is the create page, such an organization could never be opened', () => {
    expect(formProblems({ ...NEW_ORG_FORM, id: 'new' }, true).id).toMatch(/"new" is reserved/);
    expect(formProblems({ ...NEW_ORG_FORM, id: 'newco' }, true)).toEqual({});
  });

  it('a PATCH carries only the settings changed since load, security key by key', () => {
    const loaded = formFromOrganization(ORG);
    const base = settingsFromForm(loaded, false);
    expect(changedSettings(base, settingsFromForm(loaded, false))).toEqual({});

    const edited = { ...loaded, plan: 'business_50k', block_headless: false, ip_requests: '20', allowed_origins: 'acme.test' };
    expect(changedSettings(base, settingsFromForm(edited, false))).toEqual({
      plan: 'business_50k',
      security: { block_headless: false, ip_limit: { requests: 20, per_seconds: 60 }, allowed_origins: ['acme.test'] },
    });
  });

  it('a PATCH sends the CAPTCHA when a secret is typed or it is switched off, and the watched parameter when changed', () => {
    const loaded = formFromOrganization(ORG);
    const base = settingsFromForm(loaded, false);
    expect(changedSettings(base, settingsFromForm({ ...loaded, captcha_secret_key: 'new-secret' }, false))).toEqual({
      captcha: { site_key: 'site', secret_key: 'new-secret' },
    });
    expect(changedSettings(base, settingsFromForm({ ...loaded, captcha: false }, false))).toEqual({ captcha: null });
    // The block list's entries are never sent: only the watched parameter.
    expect(changedSettings(base, settingsFromForm({ ...loaded, watch_variable: '' }, false))).toEqual({
      security: { block_list: { watch_variable: null } },
    });
  });

  it('splits list fields on lines and commas', () => {
    expect(entries(' a.test, b.test\n\n c.test ')).toEqual(['a.test', 'b.test', 'c.test']);
  });
});
