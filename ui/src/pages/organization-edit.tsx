import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function OrganizationEdit(props: PageProps) {
  return <PageHeader title={`OrganizationEdit ${JSON.stringify(props.params)}`} />;
}
