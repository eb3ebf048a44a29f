package dev.iceguard.interop;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Iceberg's REST client pointed at the catalog under test, built the way an engine builds it:
 * {@code new RESTCatalog()}, a Hadoop {@code Configuration}, then {@code initialize(name, props)}.
 * The URI is the only thing that differs between the baseline run (the Iceberg REST fixture) and
 * the run through iceguard, so it comes from outside: the {@code catalog.uri} system property
 * (the suite passes it to Maven), else the {@code CATALOG_TESTS_URI} environment variable.
 */
final class RestCatalogs {
  private RestCatalogs() {}

  static String uri() {
    String uri = System.getProperty("catalog.uri");
    if (uri == null || uri.isEmpty()) {
      uri = System.getenv("CATALOG_TESTS_URI");
    }
    if (uri == null || uri.isEmpty()) {
      throw new IllegalStateException("no catalog URI: set -Dcatalog.uri=http://host:port or CATALOG_TESTS_URI");
    }
    return uri;
  }

  /**
   * A client of the catalog under test. The view defaults and overrides are catalog settings that
   * ViewCatalogTests reads back from the views it creates (defaultViewProperties,
   * overrideViewProperties); a catalog carries them as any deployment could.
   */
  static RESTCatalog open(String name, Map<String, String> extra) {
    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.URI, uri());
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key1", "catalog-default-key1");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key2", "catalog-default-key2");
    props.put(CatalogProperties.VIEW_DEFAULT_PREFIX + "key3", "catalog-default-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key3", "catalog-override-key3");
    props.put(CatalogProperties.VIEW_OVERRIDE_PREFIX + "key4", "catalog-override-key4");
    props.putAll(extra);
    RESTCatalog catalog = new RESTCatalog();
    catalog.setConf(new Configuration());
    catalog.initialize(name, props);
    return catalog;
  }

  /**
   * Refuses a catalog that holds anything: the tests delete every namespace they find, so they run
   * only against a catalog made for them (the suite starts a fresh fixture per run). Each class
   * leaves the catalog empty for the next one.
   */
  static void requireEmpty(RESTCatalog catalog) {
    List<Namespace> found = catalog.listNamespaces();
    if (!found.isEmpty()) {
      throw new IllegalStateException(
          "the catalog at " + uri() + " is not empty (" + found + "): these tests delete everything in it, give them a fresh one");
    }
  }

  /**
   * Empties the catalog: the suites reuse the same names (ns, newdb, ns1, …) in every test and
   * expect to find none of them. Children go before their parents, views and tables before
   * namespaces.
   */
  static void wipe(RESTCatalog catalog) {
    for (Namespace top : catalog.listNamespaces()) {
      wipe(catalog, top);
    }
  }

  private static void wipe(RESTCatalog catalog, Namespace namespace) {
    for (Namespace child : catalog.listNamespaces(namespace)) {
      wipe(catalog, child);
    }
    List<TableIdentifier> views = catalog.listViews(namespace);
    for (TableIdentifier view : views) {
      catalog.dropView(view);
    }
    for (TableIdentifier table : catalog.listTables(namespace)) {
      catalog.dropTable(table, true);
    }
    catalog.dropNamespace(namespace);
  }
}
