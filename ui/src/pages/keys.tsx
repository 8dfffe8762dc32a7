import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Keys(props: PageProps) {
  return <PageHeader title={`Keys ${JSON.stringify(props.params)}`} />;
}
