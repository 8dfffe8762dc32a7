import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { BlockList } from '../components/suppression-block-list';
import { SuppressionCsv } from '../components/suppression-csv';
import { SuppressionList } from '../components/suppression-list';
import { PageHeader } from '../components/ui';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/suppressions[?list=block][&q=][&cursor=]`: the suppression list or the block
 * list (two tabs, each a link), each searchable and paged through the hash query.
 */
export function Suppressions(props: PageProps) {
  const org = props.params.org ?? '';
  const block = props.query.get('list') === 'block';
  const q = (props.query.get('q') ?? '').trim();
  const cursor = props.query.get('cursor') ?? undefined;
  // A CSV import changes the list: a new key loads it again.
  const [imports, setImports] = useState(0);
  return (
    <>
      <PageHeader title="Suppressions and block list" />
      <nav class="tabs" aria-label="Lists">
        <a href={href('orgs', org, 'suppressions')} aria-current={block ? undefined : 'page'}>
          Suppressions
        </a>
        <a href={`${href('orgs', org, 'suppressions')}?list=block`} aria-current={block ? 'page' : undefined}>
          Block list
        </a>
      </nav>
      {block ? (
        <BlockList key={`b|${q}`} org={org} q={q} cursor={cursor} />
      ) : (
        <>
          <SuppressionList key={`s|${q}|${imports}`} org={org} q={q} cursor={cursor} />
          <SuppressionCsv org={org} onImported={() => setImports((n) => n + 1)} />
        </>
      )}
    </>
  );
}
