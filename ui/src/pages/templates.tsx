import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Templates(props: PageProps) {
  return <PageHeader title={`Templates ${JSON.stringify(props.params)}`} />;
}
