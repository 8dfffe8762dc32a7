import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function WebhookDetail(props: PageProps) {
  return <PageHeader title={`WebhookDetail ${JSON.stringify(props.params)}`} />;
}
