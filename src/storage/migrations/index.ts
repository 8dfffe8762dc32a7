import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_recipient_states.js';
import * as m0003 from './0003_key_grace.js';
import * as m0004 from './0004_provider_events.js';
import * as m0005 from './0005_events_intake.js';
import * as m0006 from './0006_webhooks.js';
import * as m0007 from './0007_ui.js';
import * as m0008 from './0008_service_errors.js';
import * as m0009 from './0009_retention_index.js';
import * as m0010 from './0010_catalog_stamp.js';
import * as m0011 from './0011_planner_stats.js';
import * as m0012 from './0012_partial_queue_indexes.js';
import * as m0013 from './0013_early_provider_events.js';
import * as m0014 from './0014_idn_list_keys.js';
import * as m0015 from './0015_test_mode.js';
import * as m0016 from './0016_submitted_mime.js';
import * as m0017 from './0017_template_samples.js';
import * as m0018 from './0018_retrying_index.js';
import * as m0019 from './0019_key_details.js';
import * as m0020 from './0020_request_log.js';
import * as m0021 from './0021_credit_mode.js';
import * as m0022 from './0022_alerts.js';
import * as m0023 from './0023_webhook_headers.js';

/** Numbered, applied in name order. Add a file and a line here; never edit an applied one. */
export const MIGRATIONS: Readonly<Record<string, (db: Kysely<unknown>, dialect: Dialect) => Promise<void>>> = {
  '0001_initial': m0001.up,
  '0002_recipient_states': m0002.up,
  '0003_key_grace': m0003.up,
  '0004_provider_events': m0004.up,
  '0005_events_intake': m0005.up,
  '0006_webhooks': m0006.up,
  '0007_ui': m0007.up,
  '0008_service_errors': m0008.up,
  '0009_retention_index': m0009.up,
  '0010_catalog_stamp': m0010.up,
  '0011_planner_stats': m0011.up,
  '0012_partial_queue_indexes': m0012.up,
  '0013_early_provider_events': m0013.up,
  '0014_idn_list_keys': m0014.up,
  '0015_test_mode': m0015.up,
  '0016_submitted_mime': m0016.up,
  '0017_template_samples': m0017.up,
  '0018_retrying_index': m0018.up,
  '0019_key_details': m0019.up,
  '0020_request_log': m0020.up,
  '0021_credit_mode': m0021.up,
  '0022_alerts': m0022.up,
  '0023_webhook_headers': m0023.up,
};
