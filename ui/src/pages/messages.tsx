import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function Messages(props: PageProps) {
  return <PageHeader title={`Messages ${JSON.stringify(props.params)}`} />;
}
