import fs from 'node:fs';
import path from 'node:path';
import { API_TYPES_FILE, freshApiTypes } from './ui-api-types.js';

/** `npm run ui:types`: writes ui/src/api/generated/openapi.ts from the served OpenAPI document (./ui-api-types.ts). */
const { fresh, file } = await freshApiTypes();
fs.mkdirSync(path.dirname(file), { recursive: true });
const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
fs.writeFileSync(file, fresh);
console.log(`${API_TYPES_FILE}: ${before === fresh ? 'unchanged' : 'written'} (${fresh.split('\n').length} lines)`);
