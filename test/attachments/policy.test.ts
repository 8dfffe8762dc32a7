import { describe, expect, it } from 'vitest';
import { blockedReason, cleanFilename, PLAN_ATTACHMENT_LIMIT, sniffBlockedType } from '../../src/attachments/policy.js';

describe('cleanFilename', () => {
  it('removes invisible and bidirectional characters and trailing dots', () => {
    expect(cleanFilename('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(cleanFilename('re\u200Bport\uFEFF.pdf')).toBe('report.pdf');
    expect(cleanFilename('notes.txt...')).toBe('notes.txt');
    expect(cleanFilename('notes.txt. . ')).toBe('notes.txt');
    expect(cleanFilename('a\u0000b\r\n.pdf')).toBe('ab.pdf');
  });

  it('never yields a path or an empty name', () => {
    expect(cleanFilename('../../etc/passwd')).toBe('.._.._etc_passwd');
    expect(cleanFilename('\u200B...')).toBe('attachment');
    expect(cleanFilename('x'.repeat(300))).toHaveLength(255);
  });
});

describe('blocked attachment types', () => {
  it('refuses dangerous extensions in any position and any case', () => {
    for (const name of [
      'setup.exe',
      'SETUP.EXE',
      'invoice.pdf.exe',
      'run.bat',
      'disk.iso',
      'page.html',
      'logo.svg',
      'budget.xlsm',
      'notes.one',
      'link.url',
      'app.lnk',
      'script.js',
      'tool.jar',
      'x.ps1',
      'y.vbs',
      'setup.exe.zip',
      'img.dmg',
    ]) {
      expect(blockedReason(name, undefined), name).toBeDefined();
    }
  });

  it('accepts ordinary documents', () => {
    for (const name of ['report.pdf', 'photo.jpeg', 'data.csv', 'slides.pptx', 'sheet.xlsx', 'archive.zip', 'notes.txt']) {
      expect(blockedReason(name, Buffer.from('%PDF-1.7 ordinary bytes')), name).toBeUndefined();
    }
  });

  it('judges the bytes, not only the name', () => {
    expect(sniffBlockedType(Buffer.from('MZ\x90\x00rest of a PE file', 'latin1'))).toBe('windows executable');
    expect(sniffBlockedType(Buffer.from('\x7fELF\x02\x01', 'latin1'))).toBe('ELF executable');
    expect(sniffBlockedType(Buffer.from('#!/bin/sh\nrm -rf /\n'))).toBe('script');
    expect(sniffBlockedType(Buffer.from('  <!DOCTYPE html><html><body>phish</body></html>'))).toBe('HTML document');
    expect(sniffBlockedType(Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script/></svg>'))).toBe(
      'SVG image',
    );
    expect(sniffBlockedType(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('....xl/vbaProject.bin....')]))).toBe(
      'macro-enabled Office document',
    );
    expect(sniffBlockedType(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('META-INF/MANIFEST.MF')]))).toBe(
      'Java archive',
    );
    const iso = Buffer.alloc(0x9000);
    iso.write('CD001', 0x8001, 'latin1');
    expect(sniffBlockedType(iso)).toBe('ISO disk image');
    expect(sniffBlockedType(Buffer.from([0x4c, 0, 0, 0, 1, 0x14, 2, 0, 0, 0]))).toBe('Windows shortcut');
    // A renamed executable is refused by its content.
    expect(blockedReason('holiday.jpg', Buffer.from('MZ\x90\x00', 'latin1'))).toMatch(/windows executable/);
    expect(sniffBlockedType(Buffer.from('%PDF-1.7\n'))).toBeUndefined();
    expect(
      sniffBlockedType(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('word/document.xml')])),
    ).toBeUndefined();
  });

  it('has no attachment allowance on Free and a sensible one elsewhere', () => {
    expect(PLAN_ATTACHMENT_LIMIT.free).toBe(0);
    expect(PLAN_ATTACHMENT_LIMIT.pro).toBeGreaterThan(0);
    // Base64 grows 4/3; every plan must fit within a 25 MB message.
    for (const limit of Object.values(PLAN_ATTACHMENT_LIMIT)) expect((limit * 4) / 3).toBeLessThan(25_000_000);
  });
});
