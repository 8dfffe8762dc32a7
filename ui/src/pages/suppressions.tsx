import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Suppressions(props: PageProps) {
  return <PageHeader title={`Suppressions ${JSON.stringify(props.params)}`} />;
}
