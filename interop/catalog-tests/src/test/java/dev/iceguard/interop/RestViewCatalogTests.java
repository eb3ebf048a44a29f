package dev.iceguard.interop;

import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** Iceberg's ViewCatalogTests against one REST catalog (RestCatalogs.uri()); one client for tables and views. */
public class RestViewCatalogTests extends ViewCatalogTests<RESTCatalog> {
  private static RESTCatalog catalog;

  @BeforeAll
  static void open() {
    catalog = RestCatalogs.open("view-catalog-tests", Map.of());
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
  protected Catalog tableCatalog() {
    return catalog;
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return true;
  }

  @Override
  protected boolean supportsServerSideRetry() {
    return true;
  }
}
