import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { mailOptions } from '../compose.js';
import type { Transport, TransportFactory } from '../transport.js';

/**
 * Development transport: every email becomes an .eml file under <data_dir>/outbox/, exactly the
 * bytes an SMTP relay would have received (open it in any mail client). Written to a temporary
 * name and renamed, so a reader never sees half a file.
 */
export const outboxTransport: TransportFactory = (_service, context): Transport => {
  const dir = path.join(context.dataDir, 'outbox');
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async send(mail) {
      const info = await composer.sendMail(mailOptions(mail));
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${mail.messageId}.eml`);
      await fs.writeFile(`${file}.tmp`, info.message);
      await fs.rename(`${file}.tmp`, file);
      return { response: `written to ${file}` };
    },
    async close() {
      composer.close();
    },
  };
};
