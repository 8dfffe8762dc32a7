import type { Plan } from '../domain/types.js';

/**
 * Total attachment bytes per message by plan. Base64 makes a message 4/3 of its attachments,
 * and Gmail, Outlook.com and most relays stop at 25 MB per message: 15 MiB of attachments
 * (~20 MB encoded) leaves room for the body. Free has no attachment allowance (spec).
 */
export const PLAN_ATTACHMENT_LIMIT: Readonly<Record<Plan, number>> = Object.freeze({
  free: 0,
  starter: 5 * 1024 * 1024,
  pro: 10 * 1024 * 1024,
  business_50k: 15 * 1024 * 1024,
  business_100k: 15 * 1024 * 1024,
  business_200k: 15 * 1024 * 1024,
});

/**
 * Extensions refused in any position of a name (`invoice.pdf.exe`, `setup.exe.zip`): the union
 * of Gmail's blocked types and Outlook's Level-1 list, plus the spec's HTML, SVG, macro-enabled
 * Office, OneNote and shortcut types.
 */
const BLOCKED_EXTENSIONS = new Set([
  // Gmail
  'ade',
  'adp',
  'apk',
  'appx',
  'appxbundle',
  'bat',
  'cab',
  'chm',
  'cmd',
  'com',
  'cpl',
  'diagcab',
  'diagcfg',
  'diagpack',
  'dll',
  'dmg',
  'ex',
  'ex_',
  'exe',
  'hta',
  'img',
  'ins',
  'iso',
  'isp',
  'jar',
  'jnlp',
  'js',
  'jse',
  'lib',
  'lnk',
  'mde',
  'mjs',
  'msc',
  'msi',
  'msix',
  'msixbundle',
  'msp',
  'mst',
  'nsh',
  'pif',
  'ps1',
  'scr',
  'sct',
  'shb',
  'sys',
  'vb',
  'vbe',
  'vbs',
  'vhd',
  'vxd',
  'wsc',
  'wsf',
  'wsh',
  'xll',
  // Outlook Level 1
  'accda',
  'accdb',
  'accde',
  'accdr',
  'app',
  'application',
  'appref-ms',
  'asp',
  'aspx',
  'asx',
  'bas',
  'cdxml',
  'cer',
  'cnt',
  'crt',
  'csh',
  'der',
  'fxp',
  'gadget',
  'grp',
  'hlp',
  'hpj',
  'htc',
  'inf',
  'its',
  'jsp',
  'ksh',
  'mad',
  'maf',
  'mag',
  'mam',
  'maq',
  'mar',
  'mas',
  'mat',
  'mau',
  'mav',
  'maw',
  'mcf',
  'mda',
  'mdb',
  'mdt',
  'mdw',
  'mdz',
  'mht',
  'mhtml',
  'msh',
  'msh1',
  'msh1xml',
  'msh2',
  'msh2xml',
  'mshxml',
  'msu',
  'ops',
  'osd',
  'pcd',
  'pl',
  'plg',
  'prf',
  'prg',
  'printerexport',
  'ps1xml',
  'ps2',
  'ps2xml',
  'psc1',
  'psc2',
  'psd1',
  'psdm1',
  'pssc',
  'pst',
  'py',
  'pyc',
  'pyo',
  'pyw',
  'pyz',
  'pyzw',
  'reg',
  'scf',
  'shs',
  'theme',
  'tmp',
  'udl',
  'url',
  'vbp',
  'vhdx',
  'vsmacros',
  'vsw',
  'webpnp',
  'website',
  'ws',
  'wsb',
  'xbap',
  'xnk',
  'settingcontent-ms',
  // the spec's: HTML, SVG, macro-enabled Office, OneNote, shortcuts, shell scripts
  'htm',
  'html',
  'xhtml',
  'shtml',
  'svg',
  'svgz',
  'docm',
  'dotm',
  'xlsm',
  'xltm',
  'xlam',
  'pptm',
  'potm',
  'ppam',
  'ppsm',
  'sldm',
  'one',
  'onepkg',
  'sh',
  'command',
  'desktop',
]);

// Zero-width, bidirectional and other invisible characters that disguise names
// ("invoice\u202Efdp.exe" displays as "invoiceexe.pdf"). One class matched code point by code point
// (the u flag): a variation selector (FE00–FE0F) goes even when it follows a character it would modify.
const INVISIBLE = new RegExp(
  `[${[
    '\\u0000-\\u001f\\u007f-\\u009f', // C0 and C1 controls
    '\\u00ad\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180e', // soft hyphen, Arabic letter mark, Hangul and Mongolian fillers
    '\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f', // zero-width, bidirectional marks and overrides
    '\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb', // Hangul filler, variation selectors, BOM, annotations
  ].join('')}]`,
  'gu',
);

/** Spec, Limits: names are cleaned of invisible or bidirectional characters and trailing dots. */
export function cleanFilename(name: string): string {
  const cleaned = name
    .normalize('NFC')
    .replace(INVISIBLE, '')
    .replace(/[/\\]/g, '_')
    .replace(/[.\s]+$/u, '')
    .trim();
  return cleaned === '' ? 'attachment' : cleaned.slice(0, 255);
}

/** Every extension of a cleaned name, lower-cased: `a.tar.gz` → [tar, gz]. */
function extensions(name: string): string[] {
  return name
    .toLowerCase()
    .split('.')
    .slice(1)
    .map((e) => e.trim())
    .filter(Boolean);
}

const startsWith = (bytes: Buffer, ...sig: number[]) => sig.every((b, i) => bytes[i] === b);

/**
 * What the bytes are, whatever the name says: executables, scripts, disk images, shortcuts,
 * OneNote, HTML/SVG, and ZIP containers holding macros, Java or Android/Windows packages.
 */
export function sniffBlockedType(bytes: Buffer): string | undefined {
  if (startsWith(bytes, 0x4d, 0x5a)) return 'windows executable';
  if (startsWith(bytes, 0x7f, 0x45, 0x4c, 0x46)) return 'ELF executable';
  if (
    startsWith(bytes, 0xcf, 0xfa, 0xed, 0xfe) ||
    startsWith(bytes, 0xce, 0xfa, 0xed, 0xfe) ||
    startsWith(bytes, 0xca, 0xfe, 0xba, 0xbe)
  )
    return 'Mach-O executable';
  if (startsWith(bytes, 0x23, 0x21)) return 'script';
  if (startsWith(bytes, 0x4c, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00)) return 'Windows shortcut';
  if (startsWith(bytes, 0xe4, 0x52, 0x5c, 0x7b, 0x8c, 0xd8, 0xa7, 0x4d)) return 'OneNote document';
  if (bytes.length > 0x8005 && bytes.subarray(0x8001, 0x8006).toString('latin1') === 'CD001') return 'ISO disk image';
  if (startsWith(bytes, 0x63, 0x6f, 0x6e, 0x65, 0x63, 0x74, 0x69, 0x78)) return 'VHD disk image';
  if (bytes.length >= 512 && bytes.subarray(bytes.length - 512, bytes.length - 508).toString('latin1') === 'koly')
    return 'DMG disk image';
  const head = bytes
    .subarray(0, 1024)
    .toString('utf8')
    .replace(/^\ufeff/, '')
    .trimStart()
    .toLowerCase();
  if (/^(<!doctype html|<html|<head|<body|<script|<iframe)/.test(head)) return 'HTML document';
  if (/^(<\?xml[^>]*>\s*)?(<!doctype svg[^>]*>\s*)?<svg[\s>]/.test(head)) return 'SVG image';
  if (startsWith(bytes, 0x50, 0x4b, 0x03, 0x04)) {
    // ZIP entry names are stored in clear in the local headers and the central directory.
    const names = bytes.toString('latin1');
    if (names.includes('vbaProject.bin')) return 'macro-enabled Office document';
    if (names.includes('AndroidManifest.xml')) return 'Android package';
    if (names.includes('AppxManifest.xml')) return 'Windows app package';
    if (names.includes('META-INF/MANIFEST.MF')) return 'Java archive';
  }
  return undefined;
}

/** Why a file may not be attached, or undefined when it may. */
export function blockedReason(filename: string, bytes: Buffer | undefined): string | undefined {
  const blockedExt = extensions(filename).find((e) => BLOCKED_EXTENSIONS.has(e));
  if (blockedExt !== undefined) return `.${blockedExt} files are not accepted`;
  const sniffed = bytes === undefined ? undefined : sniffBlockedType(bytes);
  return sniffed === undefined ? undefined : `${sniffed} files are not accepted`;
}
