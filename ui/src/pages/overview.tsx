import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Overview(props: PageProps) {
  return <PageHeader title={`Overview ${JSON.stringify(props.params)}`} />;
}
