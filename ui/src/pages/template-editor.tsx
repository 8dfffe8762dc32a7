import { PageHeader } from '../components/ui';
import type { PageProps } from './page-props';

export function TemplateEditor(props: PageProps) {
  return <PageHeader title={`TemplateEditor ${JSON.stringify(props.params)}`} />;
}
