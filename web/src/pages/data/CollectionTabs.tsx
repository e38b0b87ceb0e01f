import { Link } from '../../router.js';
import { useSession } from '../../session.js';
import { pagePath } from './collection-paths.js';

/** The header of every page of one collection, with its sub-pages; the current one is marked. */
export function CollectionTabs(props: { name: string; title: string }) {
  const session = useSession();
  const tabs: { label: string; to: string; show: boolean }[] = [
    { label: 'Records', to: pagePath(props.name, 'records'), show: true },
    { label: 'Summary', to: pagePath(props.name, 'summary'), show: session.can('records:read') },
    { label: 'Schema versions', to: pagePath(props.name, 'schemas'), show: session.can('schemas:read') },
    { label: 'Indexes', to: pagePath(props.name, 'indexes'), show: session.can('indexes:manage') },
    { label: 'Files', to: pagePath(props.name, 'files'), show: session.can('files:read') },
    { label: 'Settings', to: pagePath(props.name), show: true },
  ];
  return (
    <header className="page-header collection-header">
      <p className="breadcrumb">
        <Link to="/">Collections</Link> / <span>{props.name}</span>
      </p>
      <h1>{props.title}</h1>
      <nav aria-label={`Collection ${props.name}`} className="tabs">
        {tabs.filter((tab) => tab.show).map((tab) => (
          <Link key={tab.to} to={tab.to}>
            {tab.label}
          </Link>
        ))}
      </nav>
    </header>
  );
}
