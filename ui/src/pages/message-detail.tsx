import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function MessageDetail(props: PageProps) {
  return <PageHeader title={`MessageDetail ${JSON.stringify(props.params)}`} />;
}
