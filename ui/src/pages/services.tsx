import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Services(props: PageProps) {
  return <PageHeader title={`Services ${JSON.stringify(props.params)}`} />;
}
