import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Issue 11: package.json said MIT but the repository had no LICENSE; the two must agree. */
describe('LICENSE', () => {
  it('is the MIT licence of the mailroom contributors, as package.json says', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { license?: string };
    expect(pkg.license).toBe('MIT');
    const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    expect(text.split('\n')[0]).toBe('MIT License');
    expect(text).toContain('Copyright (c) 2026 mailroom contributors');
    expect(text).toContain('Permission is hereby granted, free of charge, to any person obtaining a copy');
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });
});
