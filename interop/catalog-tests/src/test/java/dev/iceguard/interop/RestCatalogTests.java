package dev.iceguard.interop;

import java.util.Map;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * Iceberg's CatalogTests against one REST catalog (RestCatalogs.uri()). The capability answers
 * describe the Iceberg REST fixture, a JDBC catalog behind Iceberg's own REST handlers; iceguard in
 * front of it must not change any of them.
 */
public class RestCatalogTests extends CatalogTests<RESTCatalog> {
  private static RESTCatalog catalog;

  @BeforeAll
  static void open() {
    catalog = RestCatalogs.open("catalog-tests", Map.of());
    RestCatalogs.requireEmpty(catalog);
  }

  @AfterAll
  static void close() throws Exception {
    RestCatalogs.wipe(catalog);
    catalog.close();
  }

  @BeforeEach
  void empty() {
    RestCatalogs.wipe(catalog);
  }

  @Override
  protected RESTCatalog catalog() {
    return catalog;
  }

  @Override
  protected RESTCatalog initCatalog(String name, Map<String, String> properties) {
    return RestCatalogs.open(name, properties);
  }

  /** JdbcCatalog creates a table in a namespace that was never created (views it refuses). */
  @Override
  protected boolean requiresNamespaceCreate() {
    return false;
  }

  /** CatalogHandlers re-applies a commit whose requirements still hold after a concurrent one. */
  @Override
  protected boolean supportsServerSideRetry() {
    return true;
  }

  /** JdbcCatalog keeps namespaces as dotted paths of any depth. */
  @Override
  protected boolean supportsNestedNamespaces() {
    return true;
  }

  /** ... and so cannot tell a level named "new.db" from the levels "new" and "db". */
  @Override
  protected boolean supportsNamesWithDot() {
    return false;
  }
}
