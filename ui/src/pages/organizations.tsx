import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Organizations(props: PageProps) {
  return <PageHeader title={`Organizations ${JSON.stringify(props.params)}`} />;
}
