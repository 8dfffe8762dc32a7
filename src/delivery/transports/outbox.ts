import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { mailOptions } from '../compose.js';
import type { Transport, TransportFactory } from '../transport.js';

/** The directory under the data dir (MAILROOM_DATA_DIR) the files go to. */
const OUTBOX = 'outbox';

/**
 * Development transport: every email becomes an .eml file under <data_dir>/outbox/, exactly the
 * bytes an SMTP relay would have received (open it in any mail client). Written to a temporary
 * name and renamed, so a reader never sees half a file.
 */
export const outboxTransport: TransportFactory = (_service, context): Transport => {
  const dir = path.join(context.dataDir, OUTBOX);
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async send(mail) {
      const info = await composer.sendMail(mailOptions(mail));
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${mail.messageId}.eml`);
      await fs.writeFile(`${file}.tmp`, info.message);
      await fs.rename(`${file}.tmp`, file);
      // Relative to the data dir: the response becomes the `sent` event's detail, which reaches
      // organizations' webhook receivers and the UI, and must not tell them the server's layout.
      return { response: `written to ${OUTBOX}/${mail.messageId}.eml` };
    },
    async close() {
      composer.close();
    },
  };
};
