import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function ServiceEdit(props: PageProps) {
  return <PageHeader title={`ServiceEdit ${JSON.stringify(props.params)}`} />;
}
