import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Webhooks(props: PageProps) {
  return <PageHeader title={`Webhooks ${JSON.stringify(props.params)}`} />;
}
